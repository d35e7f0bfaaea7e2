-- The lua5.4 workload of the training benchmark: calls, tables, strings, errors.
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t = {}
for i = 1, 200000 do t[#t + 1] = tostring(i):rep(2) end
table.sort(t)
local parts = {}
for i = 1, 20000 do parts[#parts + 1] = string.format("%d:%s", i, t[i]) end
local s = table.concat(parts, ",")
local n = 0
for _ in s:gmatch("%d+") do n = n + 1 end
local errors = 0
for i = 1, 10000 do if not pcall(error, i) then errors = errors + 1 end end
print(fib(27), #t, n, errors)
