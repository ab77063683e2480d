#!/usr/bin/env bash
# Runs a command against its own in-memory DynamoDB Local on a free loopback port, with
# DYNAMODB_ENDPOINT set, and stops DynamoDB Local afterwards whatever the outcome.
#
#   scripts/with-dynamodb.sh cargo test
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pid=$("$here/dynamodb-local.sh" start "$port")
trap 'kill "$pid" 2>/dev/null || true' EXIT INT TERM
echo "DynamoDB Local on 127.0.0.1:$port" >&2
export DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
"$@"
