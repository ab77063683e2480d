#!/usr/bin/env bash
# Prints the size of each function's bootstrap and fails if one is over its budget:
#   scripts/bootstrap-sizes.sh DIR FUNCTION...   (DIR/FUNCTION/bootstrap)
# The budget is 8 MB (8,000,000 bytes), BOOTSTRAP_BUDGET_BYTES to change it.
set -euo pipefail
dir=${1:?usage: bootstrap-sizes.sh DIR FUNCTION...}
shift
budget=${BOOTSTRAP_BUDGET_BYTES:-8000000}
over=0
for f in "$@"; do
  bootstrap="$dir/$f/bootstrap"
  bytes=$(stat -c %s "$bootstrap")
  verdict="within the $((budget / 1000000)) MB budget"
  if [ "$bytes" -gt "$budget" ]; then
    verdict="OVER the budget of $budget bytes"
    over=1
  fi
  printf '%-8s %5s MB %9s bytes  %s  (%s)\n' "$f" \
    "$(awk "BEGIN { printf \"%.2f\", $bytes / 1000000 }")" "$bytes" "$bootstrap" "$verdict"
done
exit "$over"
