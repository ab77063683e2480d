#!/usr/bin/env bash
# Installs what the browser verifier's test drives: Debian's Chromium (/usr/bin/chromium,
# with apt, through sudo when not root) and puppeteer-core, pinned in web/test/package.json,
# which never downloads a browser of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/chromium ] || scripts/apt-install.sh chromium
scripts/npm-ci.sh web/test puppeteer-core
