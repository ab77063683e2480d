#!/usr/bin/env bash
# Installs what the browser verifier's test drives: Debian's Chromium (/usr/bin/chromium,
# with apt) and puppeteer-core, pinned in web/test/package.json, which never downloads a
# browser of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/chromium ]; then
  echo "Installing Chromium with apt..." >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
fi
if [ ! -d web/test/node_modules/puppeteer-core ]; then
  echo "Installing puppeteer-core (npm ci in web/test)..." >&2
  npm ci --prefix web/test --no-audit --no-fund --loglevel=error >&2
fi
