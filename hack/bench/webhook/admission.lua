-- wrk script: POSTs one AdmissionReview (file $BODY) to the URL, optionally at a fixed rate
-- ($RATE requests/s in total over $CONNS connections; wrk's delay() has 1 ms resolution), and
-- prints one machine-readable RESULT line.
local f = assert(io.open(os.getenv("BODY"), "r"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"

local rate = tonumber(os.getenv("RATE") or "0")
local conns = tonumber(os.getenv("CONNS") or "1")

function delay()
  if rate > 0 then
    return conns * 1000 / rate
  end
  return 0
end

function done(summary, latency, requests)
  local secs = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d rps=%.0f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f errors=%d non2xx=%d\n",
    summary.requests, summary.requests / secs, latency:percentile(50) / 1000,
    latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    e.connect + e.read + e.write + e.timeout, e.status))
end
