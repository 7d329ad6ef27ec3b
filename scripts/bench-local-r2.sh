#!/usr/bin/env bash
# What a ranged R2 read costs on the local stack (`wrangler dev --local`), apart from our code: a bare
# JavaScript Worker reads `n` random 4 KiB ranges of a 64 MiB object one after another, then all at
# once, then in the shape of a fresh phrase query (one read, the dictionary bucket, then `n` at once,
# the page's passage blocks), then one range of an episode's file's size (an average stored reading
# is about 110 KB, a page 125 KB, a three-hour reading 350 KB), and each median is set beside a
# request that reads nothing, in the same run. BENCHMARKS.md ("Quotes") uses it to tell what our reads cost from what the local R2 makes of
# them: the last table is the floor any Worker reading that way reaches on this stack. Last, with wrk,
# one transcript's JSON (the sample's largest, 80 KB) read whole and answered, beside its gzip answered
# with `Content-Encoding` (to a client that asks for gzip) and its gzip inflated in the Worker (for one
# that does not): DESIGN.md's case for storing built files uncompressed. Last, at four connections as
# scripts/bench-reads.sh measures our reads: one read of a stored reading's size, and a page's passed
# through.
#   scripts/bench-local-r2.sh [REQUESTS_PER_CASE]
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8813}
REQUESTS=${1:-60}
WORK=$(realpath -m tests/.work/local-r2)
rm -rf "$WORK" && mkdir -p "$WORK"
head -c 64M /dev/urandom > "$WORK/blob"
cat > "$WORK/worker.js" <<'JS'
export default {
  async fetch(request, env) {
    const params = new URL(request.url).searchParams;
    const n = Number(params.get("n"));
    const length = Number(params.get("len") || 4096);
    if (params.get("pass") === "1") {
      // One range handed to the answer as R2's stream, as the Worker sends a built page: as HTML,
      // which the local stack rewrites (it answers such a page in chunks, without its length).
      const offset = Math.floor(Math.random() * (64 * 1024 * 1024 - length));
      const object = await env.BLOBS.get("blob", { range: { offset, length } });
      return new Response(object.body, { headers: { "content-type": "text/html; charset=utf-8" } });
    }
    const read = async () => {
      const offset = Math.floor(Math.random() * (64 * 1024 * 1024 - length));
      const object = await env.BLOBS.get("blob", { range: { offset, length } });
      return (await object.arrayBuffer()).byteLength;
    };
    const answer = params.get("answer");
    if (answer === "json") {
      const object = await env.BLOBS.get("transcript.json");
      return new Response(await object.arrayBuffer(), { headers: { "content-type": "application/json" } });
    }
    if (answer === "gzip") {
      const object = await env.BLOBS.get("transcript.json.gz");
      const headers = { "content-type": "application/json", "content-encoding": "gzip" };
      return new Response(await object.arrayBuffer(), { headers, encodeBody: "manual" });
    }
    if (answer === "inflated") {
      const object = await env.BLOBS.get("transcript.json.gz");
      const inflated = object.body.pipeThrough(new DecompressionStream("gzip"));
      return new Response(await new Response(inflated).arrayBuffer(), { headers: { "content-type": "application/json" } });
    }
    if (params.get("first") === "1") await read();
    if (params.get("at_once") === "1") {
      await Promise.all(Array.from({ length: n }, read));
    } else {
      for (let i = 0; i < n; i++) await read();
    }
    return new Response("ok");
  },
};
JS
# Static assets in front, as the Worker runs (the Worker first, then assets): every request pays what
# that routing costs, the no-IO one too, so the ratios compare with scripts/bench-reads.sh's.
mkdir -p "$WORK/public" && echo ok > "$WORK/public/ok.txt"
cat > "$WORK/wrangler.toml" <<'TOML'
name = "local-r2-probe"
main = "worker.js"
compatibility_date = "2025-09-01"
[assets]
directory = "public"
binding = "ASSETS"
run_worker_first = true
[[r2_buckets]]
binding = "BLOBS"
bucket_name = "local-r2-probe"
TOML
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
WRANGLER="$PWD/node_modules/.bin/wrangler"
TRANSCRIPT=$(find content/shows -path '*/runs/*.json' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2)
cp "$TRANSCRIPT" "$WORK/transcript.json" && gzip -9 -k "$WORK/transcript.json"
for object in blob transcript.json transcript.json.gz; do
  (cd "$WORK" && "$WRANGLER" r2 object put "local-r2-probe/$object" --file "$object" --local --persist-to state >/dev/null)
done
source scripts/dev-local-lib.sh
dev_local "$WORK" "$PORT" "/?n=0" 120
python3 - "$PORT" "$REQUESTS" <<'PY'
import http.client, statistics, sys, time
port, requests = int(sys.argv[1]), int(sys.argv[2])
connection = http.client.HTTPConnection("127.0.0.1", port)
def median_ms(query):
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        connection.request("GET", "/?" + query)
        connection.getresponse().read()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)
median_ms("n=1")  # warm up
print(f"{'reads':>5} {'one after another':>18} {'at once':>9} {'no read':>8}   (medians of {requests} requests, ms)")
for n in (1, 4, 8, 16):
    none = median_ms("n=0")
    serial, at_once = median_ms(f"n={n}"), median_ms(f"n={n}&at_once=1")
    print(f"{n:>5} {serial:>18.2f} {at_once:>9.2f} {none:>8.2f}   a read: {(serial - none) / n:.2f} ms after another, {(at_once - none) / n:.2f} ms at once")
print(f"{'then':>5} {'1 read, then n at once':>22} {'no read':>8} {'x no read':>9}   (two rounds, as a fresh phrase query reads)")
for n in (1, 2, 3, 4, 5, 6, 8):
    none = median_ms("n=0")
    rounds = median_ms(f"n={n}&at_once=1&first=1")
    print(f"{n:>5} {rounds:>22.2f} {none:>8.2f} {rounds / none:>9.2f}")
print(f"{'bytes':>8} {'one read':>9} {'no read':>8} {'x no read':>9}   (one read the size of an episode's files)")
for length in (4096, 32768, 110000, 125000, 350000):
    none = median_ms("n=0")
    one = median_ms(f"n=1&len={length}")
    print(f"{length:>8} {one:>9.2f} {none:>8.2f} {one / none:>9.2f}")
PY
p50() { wrk -t1 -c1 -d"${WRK_DURATION:-8s}" --latency "$@" | awk '/ 50%/ { print $2 }'; }
echo "one transcript answered (wrk, one connection, p50): $(wc -c < "$WORK/transcript.json") bytes, $(wc -c < "$WORK/transcript.json.gz") gzipped"
base="http://127.0.0.1:$PORT"
echo "  no read: $(p50 "$base/?n=0")"
echo "  its JSON, read whole and answered: $(p50 "$base/?answer=json")"
echo "  its gzip, to a client that asks for gzip: $(p50 -H 'Accept-Encoding: gzip' "$base/?answer=gzip")"
echo "  its gzip inflated in the Worker, to a client that does not: $(p50 "$base/?answer=inflated")"
echo "  no read, once more: $(p50 "$base/?n=0")"
# At four connections, as scripts/bench-reads.sh measures our reads: one read of an average stored
# reading's size, and an average episode page's range passed through to the answer, beside the
# request that reads nothing, each its median of the run.
p50c4() { wrk -t2 -c4 -d"${WRK_DURATION:-8s}" --latency "$@" | awk '/ 50%/ { print $2 }'; }
none=$(p50c4 "$base/?n=0"); one=$(p50c4 "$base/?n=1&len=110000"); passed=$(p50c4 "$base/?pass=1&len=125000")
again=$(p50c4 "$base/?n=0")
echo "four connections (wrk, p50): no read $none, one 110 KB read $one, 125 KB passed through $passed, no read again $again"
