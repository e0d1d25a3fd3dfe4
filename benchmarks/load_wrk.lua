-- wrk script for benchmarks/load_test.py: a mix of encode requests, share
-- creations and share reads. The Python side writes the request data into
-- $LOAD_DIR; every thread owns one connection, so each answer belongs to the
-- request built last (wrk builds one extra request at start-up that it never
-- sends, so a FIFO would be off by one) and each share's id can be matched to
-- its state.
-- Created shares are written to $LOAD_DIR/created-<thread>.txt as "id marker".

local counter = 0

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end

local function read_all(path)
  local f = assert(io.open(path, "rb"))
  local data = f:read("*a")
  f:close()
  return data
end

function init(args)
  local dir = os.getenv("LOAD_DIR")
  bodies = {}
  local i = 1
  while true do
    local f = io.open(dir .. "/encode-" .. i .. ".json", "rb")
    if not f then break end
    bodies[#bodies + 1] = f:read("*a")
    f:close()
    i = i + 1
  end
  ids = {}
  for line in io.lines(dir .. "/read-ids.txt") do ids[#ids + 1] = line end
  kinds = {}
  for line in io.lines(dir .. "/mix.txt") do kinds[#kinds + 1] = line end
  share_prefix = read_all(dir .. "/share-prefix.txt")
  share_merges = read_all(dir .. "/share-merges.txt")
  created = assert(io.open(dir .. "/created-" .. tid .. ".txt", "w"))
  current, n = nil, 0
  math.randomseed(1000 + tid)
  json_headers = { ["Content-Type"] = "application/json" }
end

function request()
  n = n + 1
  local kind = kinds[math.random(#kinds)]
  if kind == "encode" then
    current = { "encode" }
    return wrk.format("POST", "/api/encode", json_headers, bodies[math.random(#bodies)])
  elseif kind == "share" then
    local marker = "[w" .. tid .. " #" .. n .. "]"
    current = { "share", marker }
    local body = '{"tool":"bytes","text":"' .. share_prefix .. " " .. marker
      .. '","merges":"' .. share_merges .. '","view":"tokens"}'
    return wrk.format("POST", "/api/share", json_headers, body)
  end
  local id = ids[math.random(#ids)]
  current = { "read" }
  if math.random() < 0.5 then
    return wrk.format("GET", "/api/share/" .. id)
  end
  return wrk.format("GET", "/s/" .. id)
end

function response(status, headers, body)
  local item = current
  current = nil
  if item and item[1] == "share" and status == 201 then
    local id = string.match(body, '"id":"([a-z2-7]+)"')
    if id then
      created:write(id, " ", item[2], "\n")
      created:flush()
    end
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests": %d, "duration_us": %d, "bytes": %d, "connect_errors": %d, "read_errors": %d, '
    .. '"write_errors": %d, "status_errors": %d, "timeouts": %d, "p50_us": %d, "p90_us": %d, "p99_us": %d, '
    .. '"mean_us": %.1f, "max_us": %d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean, latency.max))
end
