-- Coroutines: generators, passing values both ways, status, wrap, errors inside coroutines.
local function gen(n)
	return coroutine.wrap(function()
		for i = 1, n do coroutine.yield(i) end
	end)
end
local s = 0
for v in gen(10000) do s = s + v end
print("gen", s)
local co = coroutine.create(function(a, b)
	local c = coroutine.yield(a + b)
	local d, e = coroutine.yield(c * 2)
	return d + e
end)
print(coroutine.resume(co, 1, 2))
print(coroutine.status(co), coroutine.resume(co, 10))
print(coroutine.resume(co, 3, 4))
print(coroutine.status(co), coroutine.resume(co))
local bad = coroutine.create(function() error("inside") end)
local ok, err = coroutine.resume(bad)
print(ok, (err:gsub("^.-:%d+: ", "")), coroutine.status(bad))
-- A pipeline: producer, filter, consumer.
local function producer()
	return coroutine.create(function()
		for i = 1, 2000 do coroutine.yield(i) end
	end)
end
local function filter(src)
	return coroutine.create(function()
		while true do
			local _, v = coroutine.resume(src)
			if v == nil then return end
			if v % 7 == 0 then coroutine.yield(v) end
		end
	end)
end
local f = filter(producer())
local n, last = 0, 0
while true do
	local _, v = coroutine.resume(f)
	if v == nil then break end
	n, last = n + 1, v
end
print("filtered", n, last)
print(coroutine.isyieldable(), select(2, coroutine.running()))
