-- The collector: garbage from many short-lived tables and strings, weak tables, finalizers,
-- collectgarbage's modes.  Memory figures are printed only as comparisons: they differ by build.
collectgarbage("collect")
local before = collectgarbage("count")
local keep = {}
for round = 1, 20 do
	local junk = {}
	for i = 1, 2000 do junk[i] = {i, tostring(i), {i}} end
	keep[round] = #junk
end
collectgarbage("collect")
print("rounds", #keep, collectgarbage("count") < before + 1000)
local weak = setmetatable({}, {__mode = "v"})
for i = 1, 100 do weak[i] = {i} end
local strong = weak[50]
collectgarbage("collect")
local alive = 0
for _ in pairs(weak) do alive = alive + 1 end
print("weak alive", alive, strong[1])
local finalized = 0
for i = 1, 50 do setmetatable({}, {__gc = function() finalized = finalized + 1 end}) end
collectgarbage("collect")
collectgarbage("collect")
print("finalized", finalized)
print(collectgarbage("isrunning"), type(collectgarbage("step")))
local list = nil
for i = 1, 20000 do list = {next = list, v = i} end
local s = 0
while list do s = s + list.v; list = list.next end
print("list", s)
