#!/usr/bin/env bash
# Ensures tools pinned in scripts/requirements.txt are installed in the python3 of the PATH:
#   scripts/pip-tool.sh NAME...
# The ones missing or at another version are installed in one pip call, so that pip
# resolves their dependencies together.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pins=()
for name in "$@"; do
  pin=$(grep -E "^${name}==" "$here/requirements.txt") ||
    { echo "pip-tool.sh: $name is not pinned in scripts/requirements.txt" >&2; exit 1; }
  installed=$(python3 -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p' || true)
  [ "$installed" = "${pin#*==}" ] || pins+=("$pin")
done
if [ "${#pins[@]}" -gt 0 ]; then
  echo "Installing ${pins[*]} from PyPI..." >&2
  python3 -m pip install --quiet --disable-pip-version-check "${pins[@]}" >&2
fi
