# shellcheck shell=bash
# Where a local site keeps its build and state, for scripts/dev.sh and scripts/grant-editor.sh:
#   source scripts/site-lib.sh
#   site_paths CONTENT     # sets SITE_OUT (the build folder) and SITE_STATE (local D1 and R2)
# The sample content is served from dist with state in .wrangler/state. Any other content folder gets
# .wrangler/sites/<base name>-<first 8 hex digits of the SHA-256 of its absolute path>/: the name a
# person recognises, and the hash so two folders with one base name (two clones called `content`, say)
# never share a build or a database. Run from the project root.
site_paths() {
  local content real
  content=${1:-content}
  real=$(realpath "$content") || return 1
  if [ "$real" = "$(realpath content)" ]; then
    SITE_OUT=dist
    SITE_STATE=.wrangler/state
  else
    local site
    site=.wrangler/sites/$(basename "$real")-$(printf '%s' "$real" | sha256sum | cut -c1-8)
    SITE_OUT=$site/dist
    SITE_STATE=$site/state
  fi
}
