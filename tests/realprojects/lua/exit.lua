-- A script that fails: its message on stderr and exit status 1 must be the same in both builds.
print("before the error")
io.stderr:write("to stderr\n")
local t = setmetatable({}, {__index = function(_, k) error("no field " .. k, 2) end})
print(t.missing)
