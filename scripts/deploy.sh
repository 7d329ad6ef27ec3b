#!/usr/bin/env bash
# Puts Commonplace live on Cloudflare, the one documented way (README, "Deploy"):
#   1. builds the site from the committed content (`builder build --git . --rev HEAD`, incremental when
#      the last build's DIR and DIR.state are still there) and the Worker;
#   2. finds or creates the D1 database and the R2 bucket that wrangler.toml names;
#   3. writes .wrangler-deploy.json: wrangler.toml with the real database id, ENVIRONMENT=production and
#      the operator's vars (never committed; wrangler.toml keeps the placeholder id local runs use);
#   4. applies the D1 migrations, uploads the R2 objects DIR.r2/objects.txt lists that were not uploaded
#      before (content-named, so never changed: a ledger in .deploy/ remembers them), and
#   5. runs `wrangler deploy`, with the secrets the environment holds.
# Every step is idempotent: a second run creates nothing, uploads nothing new and deploys the same.
#
# Usage: scripts/deploy.sh [--dry-run] [--out DIR] [--no-build]
#   --dry-run   every local step, migrations and uploads into a throwaway local state, and
#               `wrangler deploy --dry-run`: no Cloudflare account needed
#   --out DIR   the build output (default dist; the site also writes DIR.assets, DIR.r2, DIR.state)
#   --no-build  deploy DIR and edge/build as they are
# Environment: CLOUDFLARE_API_TOKEN (required for a real deploy), CLOUDFLARE_ACCOUNT_ID (when the token
# reaches several accounts); secrets GITHUB_CLIENT_SECRET, AI_API_KEY; vars as in OPERATOR_VARS below;
# DEPLOY_DOMAIN (optional custom domain, such as recipes.example.org). For tests: WRANGLER (the wrangler
# command), DEPLOY_WRANGLER_TOML (the config to start from), DEPLOY_STATE (instead of .deploy).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export WRANGLER_SEND_METRICS=false

# The Worker's settings an operator may set for production (README, "Deploy"). Only the ones set in
# this script's environment are passed; the others keep wrangler.toml's value or stay unset.
OPERATOR_VARS=(GITHUB_CLIENT_ID MCP_ALLOWED_ORIGINS WORKERS_AI_MODEL AI_PROVIDER AI_BASE_URL AI_MODEL
  AI_TIMEOUT_MS AI_PER_HOUR WRITES_PER_MINUTE)
SECRETS=(GITHUB_CLIENT_SECRET AI_API_KEY)
CONFIG=.wrangler-deploy.json
SOURCE_CONFIG=${DEPLOY_WRANGLER_TOML:-wrangler.toml}
STATE=${DEPLOY_STATE:-.deploy}

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf '\033[1;31mdeploy: %s\033[0m\n' "$*" >&2; exit 1; }
wrangler() { ${WRANGLER:-"$PWD/node_modules/.bin/wrangler"} "$@"; }

dry_run=false
out=dist
build=true
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry_run=true ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out="${2%/}"; shift ;;
    --no-build) build=false ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
  shift
done

if ! $dry_run && [ -z "${CLOUDFLARE_API_TOKEN:-}" ]; then
  die "CLOUDFLARE_API_TOKEN is not set. Make an API token with the 'Edit Cloudflare Workers' template plus
D1 Edit and Workers R2 Storage Edit (dash.cloudflare.com/profile/api-tokens), export it, and run again;
or run with --dry-run to check everything locally."
fi
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || die "python3 3.11 or newer is needed (it reads wrangler.toml with tomllib)"

# --- 1. build ----------------------------------------------------------------------------------------
if $build; then
  bash scripts/setup.sh
  say "building the site from the committed content into $out"
  cargo build --quiet --release -p builder
  ./target/release/builder build --git . --rev HEAD --out "$out"
  say "building the Worker"
  bash scripts/build.sh worker
fi
[ -n "${WRANGLER:-}" ] || [ -x node_modules/.bin/wrangler ] || die "wrangler is not installed: run scripts/setup.sh"
[ -f edge/build/worker/shim.mjs ] || die "the Worker is not built: run scripts/build.sh worker (or drop --no-build)"
[ -d "$out" ] || die "$out does not exist: build the site first (builder build --git . --rev HEAD --out $out)"

# --- 2. what wrangler.toml names ---------------------------------------------------------------------
# Prints shell assignments: the D1 database and R2 bucket names, the assets folder for this --out.
names=$(OUT="$out" SOURCE_CONFIG="$SOURCE_CONFIG" python3 - <<'PY'
import os, shlex, tomllib
cfg = tomllib.load(open(os.environ["SOURCE_CONFIG"], "rb"))
db = next((d for d in cfg.get("d1_databases", []) if d.get("binding") == "DB"), {})
bucket = next((b for b in cfg.get("r2_buckets", []) if b.get("binding") == "PACKS"), {})
assets = cfg.get("assets", {}).get("directory", "")
# The build writes DIR, DIR.assets and DIR.r2; wrangler.toml names them for --out dist.
if assets == "dist" or assets.startswith("dist."):
    assets = os.environ["OUT"] + assets[len("dist"):]
for name, value in [("D1_NAME", db.get("database_name", "")), ("R2_BUCKET", bucket.get("bucket_name", "")),
                    ("ASSETS_DIR", assets)]:
    print(f"{name}={shlex.quote(value)}")
print(f"PLACEHOLDER_ID={shlex.quote(db.get('database_id', ''))}")
PY
)
eval "$names"
[ -n "$D1_NAME" ] || die "$SOURCE_CONFIG has no [[d1_databases]] with binding = \"DB\""
[ -d "$ASSETS_DIR" ] || die "the assets folder $ASSETS_DIR does not exist: build the site first"

# --- 3. the D1 database and the R2 bucket ------------------------------------------------------------
account_hint="is CLOUDFLARE_API_TOKEN valid, with D1 and R2 edit rights (and CLOUDFLARE_ACCOUNT_ID set when
the token reaches several accounts)?"
d1_id() {
  local listed
  listed=$(wrangler d1 list --json) || die "'wrangler d1 list' failed: $account_hint"
  NAME="$D1_NAME" python3 -c '
import json, os, sys
text = sys.stdin.read()
dbs = json.loads(text[text.index("["):])
print(next((db["uuid"] for db in dbs if db["name"] == os.environ["NAME"]), ""))' <<<"$listed"
}
bucket_exists() {
  local listed
  listed=$(wrangler r2 bucket list) || die "'wrangler r2 bucket list' failed: $account_hint"
  grep -Eq "^name:[[:space:]]+$1[[:space:]]*$" <<<"$listed"
}

bucket_created=false
if $dry_run; then
  database_id=$PLACEHOLDER_ID
  say "dry run: D1 database $D1_NAME and R2 bucket ${R2_BUCKET:-(none)} are not looked up"
else
  say "finding the D1 database $D1_NAME"
  database_id=$(d1_id)
  if [ -z "$database_id" ]; then
    say "creating the D1 database $D1_NAME"
    wrangler d1 create "$D1_NAME" --no-update-config >&2
    database_id=$(d1_id)
    [ -n "$database_id" ] || die "created the D1 database $D1_NAME but cannot find it in 'wrangler d1 list'"
  fi
  if [ -n "$R2_BUCKET" ]; then
    say "finding the R2 bucket $R2_BUCKET"
    if ! bucket_exists "$R2_BUCKET"; then
      say "creating the R2 bucket $R2_BUCKET"
      wrangler r2 bucket create "$R2_BUCKET" --no-update-config >&2
      bucket_created=true
    fi
  fi
fi

# --- 4. the deploy config ----------------------------------------------------------------------------
# It sits beside wrangler.toml because wrangler resolves `main`, `assets` and `migrations_dir` from the
# config file's folder. [build] is dropped: the site and the Worker are built above, and wrangler's
# [build] would rebuild the site from the work tree instead of the commit.
say "writing $CONFIG"
vars_set=()
for name in "${OPERATOR_VARS[@]}"; do [ -n "${!name:-}" ] && vars_set+=("$name"); done
DATABASE_ID="$database_id" ASSETS_DIR="$ASSETS_DIR" VARS_SET="${vars_set[*]}" SOURCE_CONFIG="$SOURCE_CONFIG" \
  python3 - "$CONFIG" <<'PY'
import json, os, sys, tomllib
cfg = tomllib.load(open(os.environ["SOURCE_CONFIG"], "rb"))
cfg.pop("build", None)
for db in cfg.get("d1_databases", []):
    if db.get("binding") == "DB":
        db["database_id"] = os.environ["DATABASE_ID"]
if "assets" in cfg:
    cfg["assets"]["directory"] = os.environ["ASSETS_DIR"]
env_vars = cfg.setdefault("vars", {})
# wrangler.toml's ENVIRONMENT=dev turns on the local sign-in by handle: never in production.
env_vars["ENVIRONMENT"] = "production"
for name in os.environ["VARS_SET"].split():
    env_vars[name] = os.environ[name]
if os.environ.get("DEPLOY_DOMAIN"):
    cfg["routes"] = [{"pattern": os.environ["DEPLOY_DOMAIN"], "custom_domain": True}]
with open(sys.argv[1], "w") as f:
    json.dump(cfg, f, indent=2)
    f.write("\n")
PY

# --- 5. migrations and R2 objects --------------------------------------------------------------------
mkdir -p "$STATE"
if $dry_run; then
  # A throwaway local state, so the dry run proves the migrations apply and the upload list is sound.
  export CLOUDFLARE_CF_FETCH_ENABLED=false
  local_state="$STATE/dry-run"
  rm -rf "$local_state"
  where=(--local --persist-to "$local_state/state")
else
  where=(--remote)
fi
say "applying D1 migrations"
wrangler d1 migrations apply DB "${where[@]}" --config "$CONFIG" >&2

objects="$out.r2/objects.txt"
ledger="$STATE/r2-uploaded-${R2_BUCKET:-none}.txt"
if [ -z "$R2_BUCKET" ] || [ ! -f "$objects" ]; then
  say "no R2 objects to upload (${R2_BUCKET:+$objects is missing}${R2_BUCKET:-$SOURCE_CONFIG names no PACKS bucket})"
else
  if $dry_run; then
    uploaded=/dev/null
  else
    $bucket_created && : >"$ledger"
    touch "$ledger"
    uploaded="$ledger"
  fi
  pending="$STATE/r2-pending.json"
  n_new=$(OBJECTS="$objects" ROOT="$out.r2" UPLOADED="$uploaded" python3 - "$pending" <<'PY'
import json, os, sys
done = set(open(os.environ["UPLOADED"]).read().split())
keys = [k for k in open(os.environ["OBJECTS"]).read().split() if k not in done]
entries = [{"key": k, "file": os.path.join(os.environ["ROOT"], k)} for k in dict.fromkeys(keys)]
missing = [e["file"] for e in entries if not os.path.isfile(e["file"])]
if missing:
    sys.exit(f"deploy: {os.environ['OBJECTS']} lists objects that are not there: {', '.join(missing[:5])}")
json.dump(entries, open(sys.argv[1], "w"))
print(len(entries))
PY
  )
  if [ "$n_new" = 0 ]; then
    say "every R2 object is uploaded already"
  else
    say "uploading $n_new new R2 object(s) to $R2_BUCKET"
    wrangler r2 bulk put "$R2_BUCKET" --filename "$pending" --force "${where[@]}" --config "$CONFIG" >&2
    if ! $dry_run; then
      # Recorded only after the whole upload succeeded; a failed one is simply repeated.
      python3 -c 'import json, sys; print("\n".join(e["key"] for e in json.load(open(sys.argv[1]))))' \
        "$pending" >>"$ledger"
    fi
  fi
  rm -f "$pending"
fi

# --- 6. secrets and deploy ---------------------------------------------------------------------------
deploy_args=(--config "$CONFIG")
secrets_set=()
for name in "${SECRETS[@]}"; do [ -n "${!name:-}" ] && secrets_set+=("$name"); done
if $dry_run; then
  deploy_args+=(--dry-run --outdir "$local_state/bundle")
  [ ${#secrets_set[@]} -eq 0 ] || say "dry run: would upload the secrets ${secrets_set[*]}"
elif [ ${#secrets_set[@]} -gt 0 ]; then
  # Secrets travel with the deployment; ones set before with `wrangler secret put` are kept.
  secrets_file="$STATE/secrets.json"
  trap 'rm -f "$secrets_file"' EXIT
  (umask 077 && SECRETS_SET="${secrets_set[*]}" python3 -c '
import json, os
print(json.dumps({name: os.environ[name] for name in os.environ["SECRETS_SET"].split()}))' >"$secrets_file")
  deploy_args+=(--secrets-file "$secrets_file")
  say "uploading the secrets ${secrets_set[*]} with the deployment"
fi
say "wrangler deploy ${deploy_args[*]}"
wrangler deploy "${deploy_args[@]}"
if $dry_run; then
  say "dry run complete: nothing was sent to Cloudflare"
else
  say "deployed"
fi
