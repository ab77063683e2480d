#!/usr/bin/env bash
# `make run`: DynamoDB Local (data kept in .dynamodb/) plus the HTTP API on localhost.
# Ctrl-C stops both.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dynamodb_port=${DYNAMODB_PORT:-8000}
api_port=${TALLY_PORT:-3000}

cd "$root"
cargo build -p tally-cli
# The browser verifier, served at /verify.
scripts/verify-page.sh >/dev/null
pid=$(DYNAMODB_LOG="$root/.dynamodb/dynamodb.log" scripts/dynamodb-local.sh start "$dynamodb_port" "$root/.dynamodb/data")
trap 'kill "$pid" 2>/dev/null || true' EXIT INT TERM
echo "DynamoDB Local on http://127.0.0.1:$dynamodb_port (data in .dynamodb/data)"
DYNAMODB_ENDPOINT="http://127.0.0.1:$dynamodb_port" TABLE_NAME="${TABLE_NAME:-tally}" \
  TALLY_ADDR="127.0.0.1:$api_port" target/debug/tally serve
