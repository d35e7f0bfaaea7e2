-- A workload for lua5.4 under icpp train (tests/train/run_real.sh): recursion,
-- closures, string operations, tables, pcall/error, coroutines.  Writes a
-- result file named by arg[1] as well as stdout.
local out = assert(io.open(arg[1], "w"))

local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

local function counter()
  local n = 0
  return function(step) n = n + (step or 1); return n end
end

local function compose(f, g) return function(...) return f(g(...)) end end

local function words(s)
  local t = {}
  for w in s:gmatch("%a+") do t[#t + 1] = w:lower() end
  return t
end

local function deep_error(n)
  if n == 0 then error({code = 42, msg = "bottom"}) end
  return deep_error(n - 1) + 1
end

local c = counter()
for i = 1, 100 do c(i % 3) end
local inc_then_double = compose(function(x) return x * 2 end, function(x) return x + 1 end)

local text = string.rep("The quick brown Fox jumps over the lazy Dog; ", 40)
local freq = {}
for _, w in ipairs(words(text)) do freq[w] = (freq[w] or 0) + 1 end
local keys = {}
for k in pairs(freq) do keys[#keys + 1] = k end
table.sort(keys, function(a, b) return freq[a] > freq[b] or (freq[a] == freq[b] and a < b) end)

local ok, err = pcall(deep_error, 15)
local ok2, err2 = pcall(function() local t = nil; return t.field end)
local co = coroutine.wrap(function() for i = 1, 5 do coroutine.yield(i * i) end end)
local squares = {}
for _ = 1, 5 do squares[#squares + 1] = co() end

local lines = {
  ("fib %d"):format(fib(20)),
  ("counter %d"):format(c(0)),
  ("compose %d"):format(inc_then_double(20)),
  ("words %s"):format(table.concat(keys, ",")),
  ("gsub %s"):format((text:sub(1, 44):gsub("o", "0"))),
  ("pcall %s %d %s"):format(tostring(ok), err.code, err.msg),
  ("pcall2 %s %s"):format(tostring(ok2), tostring(err2):match("attempt to index") or "?"),
  ("coroutine %s"):format(table.concat(squares, " ")),
  ("format %08.3f %x %q"):format(math.pi, 48879, "a\"b"),
}
for _, l in ipairs(lines) do print(l); out:write(l, "\n") end
out:close()
os.exit(5)
