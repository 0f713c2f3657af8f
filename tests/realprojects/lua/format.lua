-- string.format and number-to-string conversions.
print(string.format("%5d|%-5d|%05d|%+d|%x|%X|%o|%c", 42, 42, 42, 42, 255, 255, 8, 65))
print(string.format("%.3f|%10.2f|%-10.1f|%e|%g|%g|%g", math.pi, -2.5, 1 / 3, 12345.678, 0.0001, 1e20, 100))
print(string.format("%a", 1.0), string.format("%s|%10s|%-10s|%.2s", "x", "right", "left", "trunc"))
print(string.format("%q", 1 / 0), string.format("%q", math.mininteger), string.format("%q", 0.1))
print(1e15, 1e16, 2 ^ 53, 2 ^ 63, -0.0, 1 / 0, -1 / 0, 0 / 0 ~= 0 / 0)
print(3 // 2, 3.0 // 2, 3 % -2, -3 % 2, 3 / 2, 7 // 0.0, math.type(3 // 1), math.type(3 / 1))
print(tostring(10 // 3), tostring(1e100), tonumber("0x1p4"), tonumber("  12  "), tonumber("z", 36))
print(tonumber("10", 2), tonumber("ff", 16), tonumber("1e1"), tonumber("abc"), tonumber(""))
print(math.tointeger(3.0), math.tointeger(3.5), 1 == 1.0, math.maxinteger + 1 == math.mininteger)
local rows = {}
for i = 1, 200 do rows[#rows + 1] = string.format("%04d:%8.3f:%s", i, i / 7, ("#"):rep(i % 9)) end
print(rows[1], rows[100], rows[200])
print(#table.concat(rows, "\n"))
print(string.pack and #string.pack("i4i8d", 1, 2, 3.0), string.unpack("<i4", string.pack("<i4", -7)))
