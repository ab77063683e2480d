#!/usr/bin/env bash
# `make bench`: builds the local CLI and every Lambda function of template.yaml in release
# mode for this machine, then runs `tally bench` on its own DynamoDB Local, with the
# cold-start part given each function's binary and event. Arguments go to `tally bench`.
set -euo pipefail
cd "$(dirname "$0")/.."

# The event each function answers in the cold-start part: one per function of
# template.yaml (a function without one stops the bench here).
declare -A cold_start_event=(
  [tickets]=events/create-draw.json
  [orders]=events/put-series.json
  [import]=events/sqs-import.json
  [events]=events/dynamodb-stream.json
)

mapfile -t functions < <(scripts/lambda-functions.sh)
bins=()
cold_start=()
for f in "${functions[@]}"; do
  event=${cold_start_event[$f]:-}
  if [ -z "$event" ]; then
    echo "bench.sh: no cold-start event for the function $f: add one to cold_start_event" >&2
    exit 1
  fi
  bins+=(--bin "$f")
  cold_start+=(--cold-start "$f=$event")
done
# Two builds: the functions with the service's dependencies alone, as Lambda runs them,
# and the command line with its own.
cargo build --locked --release "${bins[@]}"
cargo build --locked --release -p tally-cli
scripts/with-dynamodb.sh target/release/tally bench --bootstraps target/release "${cold_start[@]}" "$@"
