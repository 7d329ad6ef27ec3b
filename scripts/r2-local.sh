#!/usr/bin/env bash
# Puts the R2 objects a build needs (OUT.r2/objects.txt, see builder/src/layout.rs) into a local R2,
# wrangler's --persist-to folder, skipping the ones it already holds: objects are content-named and
# never change, so a ledger beside the local R2 is enough to know what is there.
#   scripts/r2-local.sh [OUT] [PERSIST_DIR]      (defaults: dist .wrangler/state)
# It also notes PERSIST_DIR in OUT.r2/local-r2.txt: every later `builder build --out OUT` runs this
# script for each noted local R2 before it switches the build's root.json (builder/src/local_r2.rs),
# so a server running on that local R2 never reads a directory that names a pack it lacks.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-dist}
STATE=${2:-.wrangler/state}
BUCKET=$(awk -F'"' '/^bucket_name/ { print $2; exit }' wrangler.toml)
R2=$(realpath "$OUT.r2")
mkdir -p "$STATE"
STATE=$(realpath "$STATE")
LEDGER="$STATE/r2-objects-put.txt"
touch "$LEDGER"
note=$(printf '%s\t%s' "$STATE" "$PWD/scripts/r2-local.sh")
grep -qxF "$note" "$R2/local-r2.txt" 2>/dev/null || printf '%s\n' "$note" >> "$R2/local-r2.txt"
todo=$(grep -vxF -f "$LEDGER" "$R2/objects.txt" || true)
[ -z "$todo" ] && exit 0
list=$(mktemp)
trap 'rm -f "$list"' EXIT
printf '%s\n' "$todo" | awk -v dir="$R2" 'BEGIN { printf "[" } { printf "%s{\"key\":\"%s\",\"file\":\"%s/%s\"}", (NR > 1 ? "," : ""), $0, dir, $0 } END { print "]" }' > "$list"
# The local R2 answered a large fill with "fetch failed" when twenty objects of 64 MiB went in at
# once (wrangler's default): three fills of six of a 2 GB build, then three of three. Four at a
# time; and objects are content-named, so putting them again is safe.
for attempt in 1 2 3; do
  WRANGLER_SEND_METRICS=false npx wrangler r2 bulk put "$BUCKET" --local --persist-to "$STATE" \
    --filename "$list" --content-type application/octet-stream --concurrency 4 >/dev/null && break
  [ "$attempt" -lt 3 ] || exit 1
  echo "filling the local R2 failed (attempt $attempt of 3); trying again" >&2
done
printf '%s\n' "$todo" >> "$LEDGER"
echo "put $(printf '%s\n' "$todo" | wc -l) new object(s) into the local R2 in $STATE"
