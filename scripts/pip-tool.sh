#!/usr/bin/env bash
# Ensures a tool pinned in scripts/requirements.txt is installed: scripts/pip-tool.sh NAME
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=$1
pin=$(grep -E "^${name}==" "$here/requirements.txt")
installed=$(python3 -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p' || true)
if [ "$installed" != "${pin#*==}" ]; then
  echo "Installing $pin from PyPI..." >&2
  python3 -m pip install --quiet --disable-pip-version-check "$pin" >&2
fi
