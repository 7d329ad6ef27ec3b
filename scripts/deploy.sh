#!/usr/bin/env bash
# Puts Commonplace live on Cloudflare, the one documented way (docs/deploy.md, "Deploying"):
#   1. builds the site from the committed content (`builder build --git . --rev HEAD`, incremental when
#      the last build's DIR and DIR.state are still there) and the Worker;
#   2. finds or creates the D1 database, the R2 buckets and the intake's queue that wrangler.toml names;
#   3. writes .wrangler-deploy.json: wrangler.toml with the real database id, ENVIRONMENT=production and
#      the operator's vars (never committed; wrangler.toml keeps the placeholder id local runs use);
#   4. applies the D1 migrations, uploads the R2 objects DIR.r2/objects.txt lists that were not uploaded
#      before (content-named, so never changed: a ledger in .deploy/ remembers them), and
#   5. runs `wrangler deploy`, with the secrets the environment holds.
# Before step 2 touches Cloudflare it proves the deploy ships nothing development-only: a `wrangler
# deploy --dry-run` of the generated config must report only variables wrangler.toml or this script
# names, none with a development value (see check_bindings below); else it stops, having uploaded nothing.
# Every step is idempotent: a second run creates nothing, uploads nothing new and deploys the same.
#
# Usage: scripts/deploy.sh [--dry-run | --check-only] [--out DIR] [--no-build]
#   --dry-run     every local step, migrations and uploads into a throwaway local state, and
#                 `wrangler deploy --dry-run`: no Cloudflare account needed
#   --check-only  only the check of what the deploy would ship (no account needed), then stop
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

# The Worker's settings an operator may set for production (docs/deploy.md, "Configuration"). Only the ones set in
# this script's environment are passed; the others keep wrangler.toml's value or stay unset.
OPERATOR_VARS=(GITHUB_CLIENT_ID MCP_ALLOWED_ORIGINS WORKERS_AI_MODEL AI_PROVIDER AI_BASE_URL AI_MODEL
  AI_TIMEOUT_MS AI_PER_HOUR WRITES_PER_MINUTE SITE_URL TRANSCRIBE_PROVIDER ASSEMBLYAI_BASE_URL DEEPGRAM_BASE_URL
  INTAKE_HOURS_PER_DAY INTAKE_HOURS_PER_ACCOUNT_PER_DAY INTAKE_MAX_AUDIO_HOURS INTAKE_POLL_SECONDS
  TRANSCRIBE_TIMEOUT_SECONDS)
SECRETS=(GITHUB_CLIENT_SECRET AI_API_KEY ASSEMBLYAI_API_KEY DEEPGRAM_API_KEY)
CONFIG=.wrangler-deploy.json
SOURCE_CONFIG=${DEPLOY_WRANGLER_TOML:-wrangler.toml}
STATE=${DEPLOY_STATE:-.deploy}

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf '\033[1;31mdeploy: %s\033[0m\n' "$*" >&2; exit 1; }
wrangler() { ${WRANGLER:-"$PWD/node_modules/.bin/wrangler"} "$@"; }

# What wrangler reads besides the config it is given, and how this script keeps each out of a deploy:
# - `.env` and `.env.local` (and `.env.<env>`), which every wrangler command loads into its own
#   environment: each `wrangler deploy` here gets `--env-file /dev/null`, so it loads none of them;
# - `.dev.vars` (and, with CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV, `.env`), which only `wrangler dev`
#   turns into bindings; a deploy never does;
# - a redirected config, `.wrangler/deploy/config.json` (written by build tools), and `wrangler.json`
#   or `wrangler.jsonc`, which win over wrangler.toml when no config is named: every wrangler command
#   here names `--config` explicitly, which turns both off;
# - `--var`/`--define` flags: this script passes none;
# - CLOUDFLARE_* and WRANGLER_* variables (CLOUDFLARE_ENV picks an [env.*] section,
#   CLOUDFLARE_INCLUDE_PROCESS_ENV reads the process environment as values): only the ones below,
#   which carry the account and credentials, are kept; the rest are unset here.
# What is left is the generated config, and the check below proves it by what wrangler itself reports.
KEPT_CLOUDFLARE_VARS=(CLOUDFLARE_API_TOKEN CLOUDFLARE_ACCOUNT_ID CLOUDFLARE_API_KEY CLOUDFLARE_EMAIL
  WRANGLER_SEND_METRICS)
while read -r name; do
  if [[ " ${KEPT_CLOUDFLARE_VARS[*]} " != *" $name "* ]]; then
    say "ignoring $name from the environment: a deploy takes its settings from $CONFIG only"
    unset "$name"
  fi
done < <(compgen -e | grep -E '^(CLOUDFLARE|WRANGLER)_' || true)

# Refuses (exit 1) unless the bindings `wrangler deploy --dry-run` reports for $CONFIG are all named by
# wrangler.toml's [vars], ENVIRONMENT or OPERATOR_VARS, none is hidden (a value wrangler hides came from
# a flag, not from the config), and none holds a development value: ENVIRONMENT other than production, a
# loopback or local address (localhost, 127.x, ::1, 0.0.0.0, *.localhost, *.local), a name about
# loopback (FETCH_ALLOW_LOOPBACK), or the values dev, development, local or test. The generated config's
# own vars are held to the same rules, so a value the table shortens cannot slip past.
check_bindings() {
  local printed="$STATE/deploy-check.txt"
  mkdir -p "$STATE"
  say "checking what the deploy would ship (wrangler deploy --dry-run)"
  if ! NO_COLOR=1 CLOUDFLARE_CF_FETCH_ENABLED=false wrangler deploy --config "$CONFIG" --dry-run --outdir "$STATE/deploy-check" --env-file /dev/null \
      >"$printed" 2>&1; then
    cat "$printed" >&2
    die "wrangler deploy --dry-run failed, so what the deploy would ship is unknown: nothing was deployed"
  fi
  OPERATOR_VARS="${OPERATOR_VARS[*]}" SOURCE_CONFIG="$SOURCE_CONFIG" python3 - "$printed" "$CONFIG" <<'PY' \
    || die "refusing to deploy: nothing was uploaded"
import json, os, re, sys, tomllib
printed = re.sub(r"\x1b\[[0-9;]*m", "", open(sys.argv[1]).read())
config = json.load(open(sys.argv[2]))
source = tomllib.load(open(os.environ["SOURCE_CONFIG"], "rb"))
named = set(source.get("vars", {})) | {"ENVIRONMENT"} | set(os.environ["OPERATOR_VARS"].split())
LOCAL = re.compile(r"localhost|\b127\.\d+\.\d+\.\d+|\[?::1\]?(?![0-9a-f:])|\b0\.0\.0\.0\b|\.local\b|loopback", re.I)
problems = []

def check(name, value, where):
    if name not in named:
        problems.append(f"{name} ({where}) is not named in {os.environ['SOURCE_CONFIG']} [vars] nor set by the deploy")
    if "LOOPBACK" in name.upper():
        problems.append(f"{name} ({where}) is a development setting")
    text = value if isinstance(value, str) else json.dumps(value)
    if name == "ENVIRONMENT" and text != "production":
        problems.append(f"ENVIRONMENT ({where}) is {text!r}, not 'production'")
    elif text.strip().lower() in ("dev", "development", "local", "test") or LOCAL.search(text):
        problems.append(f"{name} ({where}) holds the development value {text!r}")

if "Your Worker has access to the following bindings" not in printed:
    problems.append("the dry run listed no bindings, so they cannot be checked:\n" + printed)
for line in printed.splitlines():
    match = re.match(r"^env\.([A-Za-z_][A-Za-z0-9_]*)(?: \((.*)\))?\s{2,}(.+?)\s*$", line)
    if not match or not re.search(r"Variable|Secret|JSON", match.group(3)):
        continue
    name, shown = match.group(1), match.group(2) or ""
    if shown == '"(hidden)"':
        problems.append(f"{name} is hidden in the dry run's bindings: it came from outside {sys.argv[2]}")
        if name not in named:
            problems.append(f"{name} (reported by wrangler) is not named in {os.environ['SOURCE_CONFIG']} [vars] nor set by the deploy")
        continue
    try:
        value = json.loads(shown)
    except ValueError:
        value = shown
    check(name, value, "reported by wrangler")
for name, value in config.get("vars", {}).items():
    check(name, value, sys.argv[2])
if problems:
    print("deploy: the deploy would ship what production must not hold:", file=sys.stderr)
    for problem in dict.fromkeys(problems):
        print(f"  - {problem}", file=sys.stderr)
    sys.exit(1)
# What ships, for the log of the deploy.
table = printed[printed.index("Your Worker has access"):].split("\n\n")[0]
print(table, file=sys.stderr)
PY
  say "the deploy ships only production values"
}

dry_run=false
check_only=false
out=dist
build=true
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry_run=true ;;
    --check-only) check_only=true ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out="${2%/}"; shift ;;
    --no-build) build=false ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
  shift
done

if ! $dry_run && ! $check_only && [ -z "${CLOUDFLARE_API_TOKEN:-}" ]; then
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
intake = next((b for b in cfg.get("r2_buckets", []) if b.get("binding") == "INTAKE"), {})
queue = next((q for q in cfg.get("queues", {}).get("producers", []) if q.get("binding") == "INTAKE_QUEUE"), {})
assets = cfg.get("assets", {}).get("directory", "")
# The build writes DIR, DIR.assets and DIR.r2; wrangler.toml names them for --out dist.
if assets == "dist" or assets.startswith("dist."):
    assets = os.environ["OUT"] + assets[len("dist"):]
for name, value in [("D1_NAME", db.get("database_name", "")), ("R2_BUCKET", bucket.get("bucket_name", "")),
                    ("INTAKE_BUCKET", intake.get("bucket_name", "")), ("INTAKE_QUEUE", queue.get("queue", "")),
                    ("ASSETS_DIR", assets)]:
    print(f"{name}={shlex.quote(value)}")
print(f"PLACEHOLDER_ID={shlex.quote(db.get('database_id', ''))}")
PY
)
eval "$names"
[ -n "$D1_NAME" ] || die "$SOURCE_CONFIG has no [[d1_databases]] with binding = \"DB\""
[ -d "$ASSETS_DIR" ] || die "the assets folder $ASSETS_DIR does not exist: build the site first"

# --- 3. the deploy config, and what it would ship ------------------------------------------------------
# It sits beside wrangler.toml because wrangler resolves `main`, `assets` and `migrations_dir` from the
# config file's folder. [build] is dropped: the site and the Worker are built above, and wrangler's
# [build] would rebuild the site from the work tree instead of the commit. Written first with the
# placeholder database id, checked, and written again with the real id once it is known (step 4).
write_config() {
  say "writing $CONFIG"
  vars_set=()
  for name in "${OPERATOR_VARS[@]}"; do [ -n "${!name:-}" ] && vars_set+=("$name"); done
  DATABASE_ID="$1" ASSETS_DIR="$ASSETS_DIR" VARS_SET="${vars_set[*]}" SOURCE_CONFIG="$SOURCE_CONFIG" \
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
}
write_config "$PLACEHOLDER_ID"
check_bindings
if $check_only; then
  say "check only: nothing was sent to Cloudflare"
  exit 0
fi

# --- 4. the D1 database and the R2 bucket ------------------------------------------------------------
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
  # The intake's bucket and queue (episodes taken in by their address).
  if [ -n "$INTAKE_BUCKET" ] && ! bucket_exists "$INTAKE_BUCKET"; then
    say "creating the R2 bucket $INTAKE_BUCKET"
    wrangler r2 bucket create "$INTAKE_BUCKET" --no-update-config >&2
  fi
  if [ -n "$INTAKE_QUEUE" ]; then
    queues=$(wrangler queues list) || die "'wrangler queues list' failed: $account_hint"
    if ! grep -Eq "(^|[^[:alnum:]_-])$INTAKE_QUEUE([^[:alnum:]_-]|$)" <<<"$queues"; then
      say "creating the queue $INTAKE_QUEUE"
      wrangler queues create "$INTAKE_QUEUE" >&2
    fi
  fi
fi
[ "$database_id" = "$PLACEHOLDER_ID" ] || write_config "$database_id"

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
deploy_args=(--config "$CONFIG" --env-file /dev/null)
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
