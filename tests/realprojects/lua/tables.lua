-- Tables: arrays, hashes (printed in sorted order: Lua's hash order is seeded per run), sort,
-- insert/remove, move, unpack, length, metatables.
local t = {}
for i = 1, 5000 do t[i] = (i * 7919) % 5003 end
table.sort(t)
print(#t, t[1], t[2], t[2500], t[#t])
table.sort(t, function(a, b) return a > b end)
print(t[1], t[#t])
local h = {}
for i = 1, 3000 do h["k" .. (i % 997)] = (h["k" .. (i % 997)] or 0) + i end
local keys = {}
for k in pairs(h) do keys[#keys + 1] = k end
table.sort(keys)
print(#keys, keys[1], h[keys[1]], keys[#keys], h[keys[#keys]])
local sum = 0
for _, k in ipairs(keys) do sum = sum + h[k] end
print("sum", sum)
local q = {}
for i = 1, 100 do table.insert(q, i) end
for i = 1, 50 do table.remove(q, 1) end
table.insert(q, 1, "first")
print(#q, q[1], q[2], q[#q])
print(table.unpack(table.move({1, 2, 3, 4, 5}, 2, 4, 1, {})))
print(select("#", table.unpack({1, nil, 3}, 1, 3)))
local V = {}
V.__index = V
V.__add = function(a, b) return setmetatable({x = a.x + b.x, y = a.y + b.y}, V) end
V.__eq = function(a, b) return a.x == b.x and a.y == b.y end
V.__tostring = function(v) return "(" .. v.x .. "," .. v.y .. ")" end
V.__len = function(v) return math.abs(v.x) + math.abs(v.y) end
function V.new(x, y) return setmetatable({x = x, y = y}, V) end
local acc = V.new(0, 0)
for i = 1, 1000 do acc = acc + V.new(i, -i) end
print(tostring(acc), #acc, acc == V.new(500500, -500500), rawequal(acc, V.new(500500, -500500)))
local default = setmetatable({}, {__index = function(_, k) return k * 2 end})
print(default[21], rawget(default, 21))
local grid = {}
for i = 1, 60 do
	grid[i] = {}
	for j = 1, 60 do grid[i][j] = (i * j) % 11 end
end
local diag = 0
for i = 1, 60 do diag = diag + grid[i][i] end
print("diag", diag, #grid, #grid[60])
print(next({}), type(next({a = 1})))
