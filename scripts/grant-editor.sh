#!/usr/bin/env bash
# Gives an account the `editor` role (it may then name speakers: docs/quotes.md, "Names set by
# people"). The account must exist: its owner signs in once first.
#   bash scripts/grant-editor.sh <handle> [CONTENT]   # the local site scripts/dev.sh serves for CONTENT
#                                                     # (default: the sample content)
#   bash scripts/grant-editor.sh --remote <handle>    # production, with the config scripts/deploy.sh wrote
# Exits non-zero when no account has that handle, so a typo is not mistaken for a grant.
set -euo pipefail
cd "$(dirname "$0")/.."
export WRANGLER_SEND_METRICS=false

die() { printf 'grant-editor: %s\n' "$*" >&2; exit 1; }
wrangler() { ${WRANGLER:-"$PWD/node_modules/.bin/wrangler"} "$@"; }

remote=false
if [ "${1:-}" = --remote ]; then remote=true; shift; fi
[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/grant-editor.sh <handle> [CONTENT] | --remote <handle>"
handle=$1
# Handles are lower-case letters, digits and single hyphens, so the handle can stand in the SQL as it is.
[[ $handle =~ ^[a-z0-9]+(-[a-z0-9]+)*$ ]] || die "\`$handle\` is not a handle (a-z, 0-9 and single hyphens)"

if $remote; then
  [ $# -eq 1 ] || die "--remote takes no CONTENT: production has one database"
  [ -f .wrangler-deploy.json ] || die ".wrangler-deploy.json is missing: run scripts/deploy.sh first"
  where=(--remote --config .wrangler-deploy.json)
  site="production"
else
  CONTENT=${2:-content}
  [ -d "$CONTENT" ] || die "$CONTENT is not a folder"
  source scripts/site-lib.sh
  site_paths "$CONTENT"
  [ -d "$SITE_STATE" ] || die "$SITE_STATE does not exist: start the site once (CONTENT=$CONTENT bash scripts/dev.sh)"
  export CLOUDFLARE_CF_FETCH_ENABLED=false
  where=(--local --persist-to "$SITE_STATE")
  site="the local site of $CONTENT ($SITE_STATE)"
fi

# One statement that changes the row and returns it: no row back means no such account. An admin
# stays an admin (it may do all an editor may).
answer=$(wrangler d1 execute DB "${where[@]}" --json --command "UPDATE accounts SET role = CASE role \
  WHEN 'admin' THEN 'admin' ELSE 'editor' END WHERE handle = '$handle' RETURNING handle, role")
if ! grep -q "\"handle\": *\"$handle\"" <<<"$answer"; then
  die "no account has the handle $handle in $site: its owner signs in once first"
fi
echo "$handle is an editor in $site" >&2
