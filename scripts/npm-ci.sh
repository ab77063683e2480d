#!/usr/bin/env bash
# Installs the packages pinned in DIR/package-lock.json (npm ci) when DIR/node_modules
# lacks PACKAGE or is older than DIR/package.json or DIR/package-lock.json; first checks
# Node.js (scripts/node-version.sh).
#
#   scripts/npm-ci.sh web/test puppeteer-core
set -euo pipefail
dir=${1:?usage: npm-ci.sh DIR PACKAGE}
package=${2:?usage: npm-ci.sh DIR PACKAGE}
"$(dirname "$0")/node-version.sh"
modules="$dir/node_modules"
if [ -d "$modules/$package" ] && [ "$modules" -nt "$dir/package.json" ] &&
  [ "$modules" -nt "$dir/package-lock.json" ]; then
  exit 0
fi
echo "Installing the packages of $dir (npm ci)..." >&2
npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
# The time of node_modules marks the install: npm ci may keep the folder itself.
touch "$modules"
