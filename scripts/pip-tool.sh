#!/usr/bin/env bash
# Ensures tools pinned in scripts/requirements.txt are installed in a virtual environment
# of the project, never in the system's Python (Debian's refuses pip), and prints the
# environment's bin folder, where the tools' commands are:
#
#   "$(scripts/pip-tool.sh schemathesis)/schemathesis" --version
#
# The environment is target/python-tools, or $PYTHON_TOOLS (scripts/lambda-tools.sh keeps
# its own). It is made with `python3 -m venv` (on Debian, python3-venv: installed with
# apt if missing). The tools missing or at another version are installed in one pip call,
# so that pip resolves their dependencies together.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${PYTHON_TOOLS:-"$(dirname "$here")/target/python-tools"}
python="$venv/bin/python3"
# An environment without pip (a venv made without ensurepip) or whose Python is gone is made again.
if ! "$python" -m pip --version >/dev/null 2>&1; then
  python3 -c 'import ensurepip' 2>/dev/null || "$here/apt-install.sh" python3-venv
  echo "Creating the Python environment $venv..." >&2
  python3 -m venv --clear "$venv" >&2
fi
pins=()
for name in "$@"; do
  pin=$(grep -E "^${name}==" "$here/requirements.txt") ||
    { echo "pip-tool.sh: $name is not pinned in scripts/requirements.txt" >&2; exit 1; }
  installed=$("$python" -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p' || true)
  [ "$installed" = "${pin#*==}" ] || pins+=("$pin")
done
if [ "${#pins[@]}" -gt 0 ]; then
  echo "Installing ${pins[*]} from PyPI into $venv..." >&2
  "$python" -m pip install --quiet --disable-pip-version-check "${pins[@]}" >&2
fi
echo "$venv/bin"
