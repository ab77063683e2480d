#!/usr/bin/env bash
# The Lambda functions of template.yaml, one binary name a line: every function built by
# SAM's rust-cargolambda build names its binary in `BuildProperties: Binary:`. The build,
# SAM and bench targets read this list, so a function added to the template joins them.
set -euo pipefail
template=${1:-"$(dirname "$0")/../template.yaml"}
binaries=$(sed -n -E 's/^[[:space:]]+Binary:[[:space:]]*["'\'']?([A-Za-z0-9_-]+)["'\'']?[[:space:]]*$/\1/p' "$template")
if [ -z "$binaries" ]; then
  echo "lambda-functions.sh: no function with a BuildProperties Binary in $template" >&2
  exit 1
fi
# A binary that serves several functions (tickets: the ticket and drawing functions) once.
echo "$binaries" | awk '!seen[$0]++'
