#!/usr/bin/env bash
# Puts the R2 objects a build needs (OUT.r2/objects.txt, see builder/src/layout.rs) into a local R2,
# wrangler's --persist-to folder, skipping the ones it already holds: objects are content-named and
# never change, so a ledger beside the local R2 is enough to know what is there.
#   scripts/r2-local.sh [OUT] [PERSIST_DIR]      (defaults: dist .wrangler/state)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-dist}
STATE=${2:-.wrangler/state}
BUCKET=$(awk -F'"' '/^bucket_name/ { print $2; exit }' wrangler.toml)
R2=$(realpath "$OUT.r2")
LEDGER="$STATE/r2-objects-put.txt"
mkdir -p "$STATE"
touch "$LEDGER"
todo=$(grep -vxF -f "$LEDGER" "$R2/objects.txt" || true)
[ -z "$todo" ] && exit 0
list=$(mktemp)
trap 'rm -f "$list"' EXIT
printf '%s\n' "$todo" | awk -v dir="$R2" 'BEGIN { printf "[" } { printf "%s{\"key\":\"%s\",\"file\":\"%s/%s\"}", (NR > 1 ? "," : ""), $0, dir, $0 } END { print "]" }' > "$list"
WRANGLER_SEND_METRICS=false npx wrangler r2 bulk put "$BUCKET" --local --persist-to "$STATE" \
  --filename "$list" --content-type application/octet-stream >/dev/null
printf '%s\n' "$todo" >> "$LEDGER"
