-- Strings: concatenation, patterns, gsub with functions and tables, byte/char, rep, reverse.
local s = "The quick brown fox jumps over the lazy dog"
print(#s, s:upper(), s:lower())
print(s:find("fox"), s:find("o", 20, true), s:match("(%a+) dog"))
local words = {}
for w in s:gmatch("%a+") do words[#words + 1] = w end
print(#words, table.concat(words, ","))
print((s:gsub("o", "0")), select(2, s:gsub("%s", "_")))
print((s:gsub("%a+", function(w) return #w > 4 and w:reverse() or nil end)))
print((("$name is $age"):gsub("%$(%w+)", {name = "Ada", age = 36})))
local b = {}
for i = 1, 255, 17 do b[#b + 1] = string.char(i) end
local packed = table.concat(b)
print(#packed, packed:byte(1, -1))
local parts = {}
for i = 1, 2000 do parts[#parts + 1] = tostring(i * 7 % 1000) end
local big = table.concat(parts, ";")
print(#big, big:sub(1, 40), big:sub(-20))
local count = 0
for n in big:gmatch("%d+") do if tonumber(n) % 3 == 0 then count = count + 1 end end
print("multiples of 3:", count)
print(("ab"):rep(5, "-"), ("x"):rep(0) == "", ("%d%%"):format(50))
print(string.format("%q", 'a "quoted"\n line\0end'))
print(("  trim me  "):match("^%s*(.-)%s*$") .. "|")
print(utf8.char(72, 228, 8364, 128512), utf8.len("häé€"))
for p, c in utf8.codes("aé€") do io.write(p, ":", c, " ") end
print()
local ok, err = pcall(string.rep)
print(ok, err)
