#!/usr/bin/env bash
# Fuzzes the HTTP API against its own OpenAPI document with Schemathesis (pinned in
# scripts/requirements.txt, installed in the project's Python environment by
# scripts/pip-tool.sh; curl with apt if missing): `tally serve` (debug build) on a free
# loopback port with a fresh table, every operation, and checks that each answer is no
# server error and matches the document (status, content type, body schema). Stops the
# server whatever the outcome. Needs DYNAMODB_ENDPOINT:
#
#   scripts/with-dynamodb.sh scripts/schemathesis.sh
#
# SCHEMATHESIS_EXAMPLES sets the cases per operation (default 30), SCHEMATHESIS_SEED
# replays a run (Schemathesis prints its seed).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DYNAMODB_ENDPOINT:?run through scripts/with-dynamodb.sh}"

tools=$(scripts/pip-tool.sh schemathesis)
scripts/apt-install.sh curl
cargo build --locked --quiet -p tally-cli

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
work=target/schemathesis
mkdir -p "$work"
TABLE_NAME="tally-schemathesis-$RANDOM$RANDOM" TALLY_ADDR="127.0.0.1:$port" \
  target/debug/tally serve >"$work/serve.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT INT TERM

for _ in $(seq 1 120); do
  curl -sf -o /dev/null "$base/openapi.json" && break
  kill -0 "$server" 2>/dev/null || { cat "$work/serve.log" >&2; echo "tally serve exited" >&2; exit 1; }
  sleep 0.25
done

seed=()
[ -n "${SCHEMATHESIS_SEED:-}" ] && seed=(--seed "$SCHEMATHESIS_SEED")
start=$SECONDS
status=0
# From its own folder: Schemathesis keeps a cache in the working directory.
(cd "$work" && "$tools/schemathesis" --no-color run "$base/openapi.json" --url "$base" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --max-examples "${SCHEMATHESIS_EXAMPLES:-30}" --workers 1 --generation-database none \
  --report junit --report-dir . "${seed[@]}") || status=$?
echo "schemathesis took $((SECONDS - start)) s (server log: $work/serve.log)"
exit "$status"
