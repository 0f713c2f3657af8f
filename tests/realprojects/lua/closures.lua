-- Closures and upvalues, varargs, recursion, tail calls, error handling.
local function counter(start)
	local n = start
	return function(d) n = n + (d or 1) return n end, function() return n end
end
local inc, get = counter(10)
for i = 1, 1000 do inc(i % 3) end
print(get())
local fns = {}
for i = 1, 10 do fns[i] = function() return i * i end end
local s = 0
for _, f in ipairs(fns) do s = s + f() end
print("squares", s)
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
print("fib", fib(20))
local function loop(n, acc) if n == 0 then return acc end return loop(n - 1, acc + n) end
print("tail", loop(100000, 0))
local function va(...)
	local t = table.pack(...)
	return t.n, select("#", ...), (select(-1, ...))
end
print(va(1, nil, 3, nil))
local function compose(...)
	local fs = {...}
	return function(x)
		for i = #fs, 1, -1 do x = fs[i](x) end
		return x
	end
end
print(compose(function(x) return x + 1 end, function(x) return x * 2 end)(20))
local ok, err = pcall(function() error({code = 42}) end)
print(ok, type(err), err.code)
ok, err = pcall(function() error("plain", 0) end)
print(ok, err)
print(select(2, xpcall(function() local x = nil; return x.field end,
	function(m) return "handled: " .. tostring(m):gsub("^.-:%d+: ", "") end)))
local memo = setmetatable({}, {__mode = "k"})
local function cached(t) memo[t] = memo[t] or #t return memo[t] end
print(cached({1, 2, 3}))
local env = {print = print}
local chunk = load("x = 6 * 7; return x", "chunk", "t", env)
print(chunk(), env.x, x)
print(pcall(load, "return +"))
print(load("return +"))
