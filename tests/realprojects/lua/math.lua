-- Integer and float arithmetic, bitwise operators, the math library (no random numbers: their
-- seed is the clock's).
local s = 0
for i = 1, 100000 do s = s + i * i % 7 end
print("int sum", s)
local f = 0.0
for i = 1, 10000 do f = f + 1 / i end
print(string.format("harmonic %.12f", f))
print(math.floor(-3.5), math.ceil(-3.5), math.abs(math.mininteger), math.fmod(7, 3), math.fmod(-7, 3))
print(string.format("%.10f %.10f %.10f", math.sin(1), math.cos(1), math.tan(1)))
print(string.format("%.10f %.10f %.10f", math.exp(1), math.log(10), math.log(8, 2)))
print(math.sqrt(2) ^ 2 - 2 < 1e-15, math.huge > math.maxinteger, -math.huge < math.mininteger)
print(math.max(3, 9, -1, 4.5), math.min(3, 9, -1, 4.5), math.ult(1, -1))
print(0xFF & 0x0F, 0xF0 | 0x0F, 0xFF ~ 0x0F, ~0, 1 << 62, 1 << 64, -1 >> 1, 5 // 2 << 3)
local primes, sieve = {}, {}
for i = 2, 20000 do
	if not sieve[i] then
		primes[#primes + 1] = i
		for j = i * i, 20000, i do sieve[j] = true end
	end
end
print("primes", #primes, primes[#primes])
local function gcd(a, b) while b ~= 0 do a, b = b, a % b end return a end
print(gcd(1071, 462), gcd(2 ^ 40 // 1, 6 ^ 15 // 1))
local m = {{1, 2}, {3, 4}}
local function mul(a, b)
	return {{a[1][1] * b[1][1] + a[1][2] * b[2][1], a[1][1] * b[1][2] + a[1][2] * b[2][2]},
		{a[2][1] * b[1][1] + a[2][2] * b[2][1], a[2][1] * b[1][2] + a[2][2] * b[2][2]}}
end
local p = {{1, 0}, {0, 1}}
for _ = 1, 20 do p = mul(p, m) end
print(p[1][1], p[1][2], p[2][1], p[2][2])
