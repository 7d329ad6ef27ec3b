#!/usr/bin/env bash
# End-to-end reads through the real Worker in `wrangler dev --local`, on a build in the production
# layout (OUT.assets as static assets, OUT.r2's packs in a local R2, a fresh local D1). For each kind of
# read, wrk (CONNECTIONS, default 4) gives p50 and p99, next to a request that does no IO (a CORS preflight,
# answered by the Worker alone), measured in the same run before and after: the ratio is what this
# machine's noise cannot move much.
#   scripts/bench-reads.sh OUT [DURATION] [KINDS]
# e.g. scripts/bench-reads.sh tests/.work/bench-dist-100000 20s
#      scripts/bench-reads.sh tests/.work/corpus-dist 20s "attribute transcript phrase"
# KINDS: recipe-json recipe-page search attribute reading-file (the file `attribute` reads, passed through)
# attribute-anywhere transcript phrase phrase-fresh
# quote-page quote-page-anywhere episode-page search-page show-page compare-page review-page (the quote
# service's pages and the editors' queue, signed in as an editor, each
# followed by its page weight: the bytes of its HTML, inline CSS and script included), show-list (the
# API's list of a show's episodes, which its page reads), d1-read (the recipe change feed of a site
# nobody wrote to: one D1 query, the floor of a read that asks D1)
# attribute-anywhere-fresh (default: all but the fresh ones that the build has data for; a fresh kind
# never repeats a request, so it measures reads that no cache answers), a fresh kind with "-by-total"
# (phrase-fresh-by-total: one request at a time, p50 by how many places hold the phrase),
# phrase-fresh-limit5 (fresh phrase queries of its own, with pages of 5 hits instead of 10),
# phrase-common-fresh (fresh phrases of only the 200 most frequent words, 2-8 of them), or files of
# request paths, one per line: the recipe search bench's queries (tests/.work/bench-queries.txt) or
# the phrase bench's (tests/.work/phrase-queries.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$(realpath "$1")
DURATION=${2:-20s}
KINDS=${3:-recipe-json recipe-page search attribute transcript phrase}
PORT=${PORT:-8799}
CONNECTIONS=${CONNECTIONS:-4}
THREADS=$(( CONNECTIONS < 2 ? CONNECTIONS : 2 ))
WORK=$(realpath -m tests/.work/reads)
rm -rf "$WORK" && mkdir -p "$WORK"
source scripts/dev-local-lib.sh
bench_wrangler_toml "$WORK" commonplace-bench "$OUT.assets"
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
WRANGLER="$PWD/node_modules/.bin/wrangler"
started=$(date +%s)
bash scripts/r2-local.sh "$OUT" "$WORK/state"
echo "local R2 filled in $(( $(date +%s) - started )) s: $(wc -l < "$OUT.r2/objects.txt") packs, $(du -sh "$OUT.r2/packs" | cut -f1)"
(cd "$WORK" && "$WRANGLER" d1 migrations apply DB --local --persist-to state >/dev/null)
# An editor signed in, for the review queue's page: an account and a session row, as the kitchen's
# sign-in writes them (only the token's SHA-256 is stored); its cookie goes with every request.
SESSION=bench-editor-session
(cd "$WORK" && "$WRANGLER" d1 execute DB --local --persist-to state --command \
  "INSERT INTO accounts (handle, display_name, role, created_at) VALUES ('bench-editor', 'Bench editor', 'editor', '2026-01-01T00:00:00Z');
   INSERT INTO sessions (token_hash, account_id, csrf, created_at, expires_s) SELECT '$(printf %s "$SESSION" | sha256sum | cut -d' ' -f1)', id, 'bench', '2026-01-01T00:00:00Z', 4102444800 FROM accounts WHERE handle = 'bench-editor';" >/dev/null)
export COOKIE="cp_session=$SESSION"
started=$(date +%s)
dev_local "$WORK" "$PORT" /llms.txt
echo "worker ready after $(( $(date +%s) - started )) s on $(find "$OUT.assets" -type f | wc -l) static files"

# Request paths for each kind, drawn with a fixed seed from what the build holds.
python3 - "$OUT" "$WORK" <<'PY'
import json, os, random, sys, urllib.parse
out, work = sys.argv[1], sys.argv[2]
rng = random.Random(11)
def write(kind, paths):
    if paths:
        with open(f"{work}/{kind}.txt", "w") as f:
            f.write("\n".join(paths) + "\n")
slugs = [s for s, _ in json.load(open(f"{out}/slugs.json"))]
picked = [rng.choice(slugs) for _ in range(2000)] if slugs else []
write("recipe-json", [f"/r/{s}.json" for s in picked])
write("recipe-page", [f"/r/{s}" for s in picked])
words = [w for s in picked for w in s.split("-") if len(w) > 3 and not w.isdigit()]
write("search", [f"/api/recipes?q={urllib.parse.quote(w)}" for w in words[:2000]])
episodes = json.load(open(f"{out}/episodes.json")) if os.path.exists(f"{out}/episodes.json") else []
attribute, anywhere, transcript, phrase, reading = [], [], [], [], []
for ep in rng.sample(episodes, min(400, len(episodes))):
    doc = json.load(open(f"{out}/episodes/{ep['id']}/transcript.json"))
    segments = [s for s in doc["segments"] if len(s["text"].split()) >= 12]
    transcript.append(f"/api/episodes/{ep['id']}/transcript")
    if not segments:
        continue
    words = rng.choice(segments)["text"].split()
    start = rng.randrange(0, len(words) - 10)
    quote = " ".join(words[start:start + 10])
    attribute.append("/api/attribute?" + urllib.parse.urlencode({"source_url": ep["source_url"], "quote": quote}))
    reading.extend(f"/episodes/{ep['id']}/{name}" for name in os.listdir(f"{out}/episodes/{ep['id']}") if name.startswith("reading."))
    anywhere.append("/api/attribute?" + urllib.parse.urlencode({"quote": quote}))
    phrase.append("/api/search?" + urllib.parse.urlencode({"q": " ".join(words[start:start + 3])}))
# Fresh queries: as many distinct ones as a run sends (no request repeats, so none is answered from
# what an earlier one left in the isolate's caches), after a warm-up on other queries of the same
# kind, as a long-lived isolate serving new questions would be. The warm-up is 4,000 distinct
# queries for 30 s (with 1,000 for 10 s, a second run of a fresh kind measured 4-10% lower ratios
# than the first), so the isolate is in its steady state.
WARM_QUERIES = 4000
# Each episode's segments of at least 12 words, read once for both draws below.
long_segments = []
for ep in episodes:
    doc = json.load(open(f"{out}/episodes/{ep['id']}/transcript.json"))
    long_segments.append([s["text"].split() for s in doc["segments"] if len(s["text"].split()) >= 12])
def fresh_queries(rng):
    """Three words (a search) and ten (a quote) from eight segments of every episode, shuffled."""
    phrase, anywhere = [], []
    for segments in long_segments:
        for words in rng.sample(segments, min(8, len(segments))):
            start = rng.randrange(0, len(words) - 10)
            phrase.append("/api/search?" + urllib.parse.urlencode({"q": " ".join(words[start:start + 3])}))
            anywhere.append("/api/attribute?" + urllib.parse.urlencode({"quote": " ".join(words[start:start + 10])}))
    rng.shuffle(phrase)
    rng.shuffle(anywhere)
    return phrase, anywhere
fresh_phrase, fresh_anywhere = fresh_queries(rng)
# Phrases of common words only ("at the end of the day"), as people paste them: runs of 2-8 of the
# build's 200 most frequent words, as many of each length, from eight segments of every episode.
def plain(word):
    return word.lower().strip(".,!?;:\"()[]-—…")
counts = {}
for segments in long_segments:
    for words in segments:
        for word in words:
            counts[plain(word)] = counts.get(plain(word), 0) + 1
common = set(sorted((w for w in counts if w), key=lambda w: (-counts[w], w))[:200])
def common_queries(rng):
    asked = set()
    for segments in long_segments:
        for words in rng.sample(segments, min(8, len(segments))):
            n, runs, run = rng.randint(2, 8), [], []
            for word in words + [None]:
                if word is not None and plain(word) in common:
                    run.append(word)
                    continue
                if len(run) >= n:
                    runs.append(run)
                run = []
            if runs:
                run = rng.choice(runs)
                start = rng.randrange(0, len(run) - n + 1)
                asked.add("/api/search?" + urllib.parse.urlencode({"q": " ".join(run[start:start + n])}))
    asked = sorted(asked)
    rng.shuffle(asked)
    return asked
# Pages of 5 instead of 10, on queries drawn apart from the others (so a run of both kinds does not
# answer one from pieces the other left in the cache).
limit5 = [path + "&limit=5" for path in fresh_queries(random.Random(5))[0]]
common_fresh = common_queries(random.Random(7))
for kind, paths in (("phrase-fresh", fresh_phrase), ("phrase-fresh-limit5", limit5), ("phrase-common-fresh", common_fresh), ("attribute-anywhere-fresh", fresh_anywhere)):
    write(f"{kind}.warm", paths[:WARM_QUERIES])
    write(kind, paths[WARM_QUERIES:])
write("attribute", attribute)
# The file an attribution reads (`episodes/<id>/reading.v<N>.bin`) of the same episodes, passed through
# as a built file: the same R2 read with nothing decoded or answered, the floor under `attribute`.
write("reading-file", reading)
write("attribute-anywhere", anywhere)
# The quote service's pages, on the same questions: a page per question, every episode once.
write("quote-page", [p.replace("/api/attribute?", "/quotes?") for p in attribute])
write("quote-page-anywhere", [p.replace("/api/attribute?", "/quotes?") for p in anywhere])
write("search-page", [p.replace("/api/search?", "/search?") for p in phrase])
write("episode-page", [f"/episodes/{ep['id']}" for ep in rng.sample(episodes, len(episodes))])
shows = sorted({ep["show"] for ep in episodes})
write("show-page", [f"/shows/{show}" for show in shows])
write("show-list", [f"/api/episodes?show={show}&limit=50" for show in shows])
write("transcript", transcript)
# Two runs of an episode compared (its canonical run and the first other), every such episode once;
# the editors' review queue (one page: the 50 most-cited labels of the whole queue).
compare = []
for ep in rng.sample(episodes, len(episodes)):
    runs = json.load(open(f"{out}/episodes/{ep['id']}.json"))["runs"]
    if len(runs) >= 2:
        compare.append(f"/episodes/{ep['id']}/compare")
write("compare-page", compare)
write("review-page", ["/kitchen/review"] if os.path.exists(f"{out}/episodes/review.json") else [])
# One D1 query and nothing else of note (the recipe change feed of a site nobody wrote to): the floor
# of a read that asks D1, beside the review page.
write("d1-read", ["/api/changes?since=0"])
write("phrase", phrase)
PY

cat > "$WORK/replay.lua" <<'LUA'
-- Each of wrk's STRIDE threads takes every STRIDE-th path, so no two send the same request.
local threads = 0
function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end
local paths = {}
for line in io.lines(os.getenv("PATHS_FILE")) do paths[#paths + 1] = line end
local stride = tonumber(os.getenv("STRIDE") or "2")
local i = -1
request = function()
  i = i + 1
  return wrk.format(os.getenv("METHOD"), paths[(i * stride + (id or 0)) % #paths + 1], { Cookie = os.getenv("COOKIE") })
end
LUA
echo "/api/recipes" > "$WORK/noio.txt"
# p50 and p99 in ms from wrk's latency distribution.
run() {
  local method=$1 file=$2
  METHOD=$method PATHS_FILE=$file STRIDE=$THREADS wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$WORK/replay.lua" \
    "http://127.0.0.1:$PORT" > "$WORK/last.txt"
  python3 - "$WORK/last.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def ms(v):
    n, unit = re.match(r"([\d.]+)(us|ms|s)", v).groups()
    return float(n) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
p = {m.group(1): ms(m.group(2)) for m in re.finditer(r"^\s+(50|99)%\s+(\S+)", text, re.M)}
reqs = re.search(r"^\s*(\d+) requests", text, re.M).group(1)
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
print(f"{p['50']:.2f} {p['99']:.2f} {reqs} {errors.group(1) if errors else 0}")
PY
}
# A fresh kind "by total": one request at a time, 50 of the kind then 50 no-IO requests, and again, for
# REQUESTS (default 1500) of the kind's paths taken from the end of its list (which one wrk run of
# the same kind, from the start, does not reach); p50 of each class of answers by how many places hold
# the phrase (`total` of a search, `match` of an attribution), beside the no-IO p50 of the same run.
by_total() {
  local kind=$1
  python3 - "$WORK/$kind.txt" "$PORT" "${REQUESTS:-1500}" <<'PY'
import http.client, json, statistics, sys, time
paths, port, n = open(sys.argv[1]).read().split(), int(sys.argv[2]), int(sys.argv[3])
conn = http.client.HTTPConnection("127.0.0.1", port)
def timed(method, path):
    start = time.perf_counter()
    conn.request(method, path)
    response = conn.getresponse()
    body = response.read()
    return (time.perf_counter() - start) * 1000, response.status, body
classes = [(0, 0, "0"), (1, 1, "1"), (2, 9, "2-9"), (10, 31, "10-31"), (32, None, "32+")]
times, noio, errors = {}, [], 0
# In blocks of 50, each followed by 50 no-IO requests: back to back, as wrk sends them, so a no-IO
# request seldom follows a query (which would charge it whatever work the query left behind).
tail = list(reversed(paths[-n:]))
for at in range(0, len(tail), 50):
    for path in tail[at:at + 50]:
        ms, status, body = timed("GET", path)
        if status != 200:
            errors += 1
            continue
        answer = json.loads(body)
        count = answer.get("total", answer.get("match", 0)) if answer.get("found", True) else 0
        label = next(l for lo, hi, l in classes if count >= lo and (hi is None or count <= hi))
        times.setdefault(label, []).append(ms)
        times.setdefault("all", []).append(ms)
    noio.extend(timed("OPTIONS", "/api/recipes")[0] for _ in range(50))
base = statistics.median(noio)
print(f"  one at a time, {len(times.get('all', []))} answers, no-IO p50 {base:.2f} ms ({errors} not 200)")
for label in [l for _, _, l in classes] + ["all"]:
    if label in times:
        t = sorted(times[label])
        p50 = statistics.median(t)
        print(f"  {label:>6} places: {len(t):5} answers ({100 * len(t) / len(times['all']):4.1f}%), p50 {p50:6.2f} ms = {p50 / base:.2f}x")
PY
}
# How far into its list each fresh kind's runs have gone: a fresh kind named again in KINDS goes on
# from there (so "phrase-fresh phrase-fresh-limit5 phrase-fresh phrase-fresh-limit5" alternates two
# kinds on queries none of them sent before; a list holds about 12,000, a run sends 4,000-5,000).
declare -A sent=()
printf '%-20s %9s %9s %9s %9s %8s %8s %7s\n' kind p50_ms p99_ms noio_p50 noio_p99 p50_x p99_x requests
for kind in $KINDS; do
  if [[ $kind == *-by-total ]]; then
    kind=${kind%-by-total}
    [ -s "$WORK/$kind.txt" ] || { echo "$kind: no data in this build"; continue; }
    METHOD=GET PATHS_FILE="$WORK/$kind.warm.txt" wrk -t2 -c2 -d"${WARMUP:-30s}" -s "$WORK/replay.lua" \
      "http://127.0.0.1:$PORT" >/dev/null
    echo "$kind, by total:"
    by_total "$kind"
    continue
  fi
  if [ -f "$kind" ]; then
    cp "$kind" "$WORK/$(basename "$kind")"
    kind=$(basename "$kind" .txt)
  fi
  [ -s "$WORK/$kind.txt" ] || { echo "$kind: no data in this build"; continue; }
  # Warm the isolate's caches once, as a long-lived isolate would be (a fresh kind on other queries).
  warm="$WORK/$kind.txt" warmup=${WARMUP:-10s}
  [ -s "$WORK/$kind.warm.txt" ] && warm="$WORK/$kind.warm.txt" warmup=${WARMUP:-30s}
  METHOD=GET PATHS_FILE="$warm" wrk -t2 -c2 -d"$warmup" -s "$WORK/replay.lua" "http://127.0.0.1:$PORT" >/dev/null
  read -r a50 a99 _ _ < <(run OPTIONS "$WORK/noio.txt")
  paths="$WORK/$kind.txt"
  if [ -s "$WORK/$kind.warm.txt" ]; then
    paths="$WORK/$kind.from.txt"
    tail -n +"$(( ${sent[$kind]:-0} + 1 ))" "$WORK/$kind.txt" > "$paths"
    [ -s "$paths" ] || { echo "$kind: no fresh queries left"; continue; }
  fi
  read -r k50 k99 reqs errors < <(run GET "$paths")
  # wrk's threads may send unevenly: a margin, so the next run's queries are surely new.
  sent[$kind]=$(( ${sent[$kind]:-0} + reqs + reqs / 4 + 10 ))
  read -r b50 b99 _ _ < <(run OPTIONS "$WORK/noio.txt")
  python3 -c "
a50, a99, k50, k99, b50, b99 = map(float, '$a50 $a99 $k50 $k99 $b50 $b99'.split())
n50, n99 = (a50 + b50) / 2, (a99 + b99) / 2
print(f'%-20s %9.2f %9.2f %9.2f %9.2f %8.2f %8.2f %7s' % ('$kind', k50, k99, n50, n99, k50 / n50, k99 / n99, '$reqs'))"
  [ "$errors" = 0 ] || echo "  ($errors answers were not 2xx/3xx)"
  if [[ $kind == *-page* && $kind != recipe-page ]]; then
    echo "  page weight: $(curl -s -H "Cookie: $COOKIE" "http://127.0.0.1:$PORT$(head -n 1 "$WORK/$kind.txt")" | wc -c) bytes (HTML with its CSS and script)"
  fi
  [[ $paths != *.from.txt ]] || [ "$reqs" -le "$(wc -l < "$paths")" ] ||
    echo "  ($kind ran out of fresh queries: some repeated)"
done
