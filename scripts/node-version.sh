#!/usr/bin/env bash
# Stops with a message unless node and npm are on the PATH and node is a version that the
# pinned packages run on: 22.12 or newer, or 20.19 or newer in the 20 line (puppeteer-core
# needs a node that loads ES modules with require; the TypeScript client's tests need
# `node --test-concurrency`).
set -euo pipefail
wanted="Node.js 22.12 or newer (or 20.19 or newer in the 20 line) with npm"
version=$(node --version 2>/dev/null) || { echo "No node on the PATH: install $wanted" >&2; exit 1; }
command -v npm >/dev/null || { echo "No npm on the PATH: install $wanted" >&2; exit 1; }
IFS=. read -r major minor _ <<<"${version#v}"
if [ "$major" -ge 23 ] || { [ "$major" -eq 22 ] && [ "$minor" -ge 12 ]; } ||
  { [ "$major" -eq 20 ] && [ "$minor" -ge 19 ]; }; then
  exit 0
fi
echo "Node.js $version does not run the pinned packages: install $wanted" >&2
exit 1
