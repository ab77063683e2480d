#!/usr/bin/env bash
# Runs a command against a world of its own on 127.0.0.1: `tally serve` (debug build) on
# a fresh table, reaching DynamoDB Local through harness.py's fault proxy, behind
# harness.py's stand-in for API Gateway, which checks SigV4 signatures with botocore.
# Needs DYNAMODB_ENDPOINT (scripts/with-dynamodb.sh), curl, and botocore in the PATH's
# python3 (scripts/clients-test.sh puts the project's Python environment first).
#
#   scripts/with-dynamodb.sh clients/harness/run.sh COMMAND...
#
# The command sees TALLY_URL (the stand-in: sign every request), TALLY_HARNESS (its
# control endpoint), AWS_REGION and test credentials in the environment
# (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; TALLY_TEST_SESSION_* for a set with a
# session token; HARNESS_CONTAINER_TOKEN for the container credential endpoint, which
# TALLY_HARNESS serves at /container-credentials, with an instance's metadata service;
# TALLY_TOKEN, a token the stand-in takes as a JWT authorizer would).
set -euo pipefail
: "${DYNAMODB_ENDPOINT:?run through scripts/with-dynamodb.sh}"
command -v curl >/dev/null || { echo "run.sh needs curl (scripts/apt-install.sh curl)" >&2; exit 1; }
python3 -c 'import botocore' 2>/dev/null ||
  { echo "run.sh needs botocore in the PATH's python3: run it through scripts/clients-test.sh" >&2; exit 1; }
root=$(cd "$(dirname "$0")/../.." && pwd)
work="$root/target/clients"
mkdir -p "$work"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_for() {
  local url=$1 pid=$2 log=$3
  for _ in $(seq 1 120); do
    curl -s -o /dev/null "$url" && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "$url: the process exited" >&2; exit 1; }
    sleep 0.25
  done
  echo "$url did not answer within 30 s" >&2
  exit 1
}

tally_port=$(free_port) gateway_port=$(free_port) proxy_port=$(free_port) control_port=$(free_port)
export HARNESS_REGION=eu-west-1
# Made up for these tests: the stand-in accepts them, AWS knows neither.
export AWS_ACCESS_KEY_ID=AKIDTALLYCLIENTTEST AWS_SECRET_ACCESS_KEY=tally-client-test-secret-0123456789abcdef
export TALLY_TEST_SESSION_KEY=ASIATALLYCLIENTTEST TALLY_TEST_SESSION_SECRET=tally-session-test-secret-0123456789
export TALLY_TEST_SESSION_TOKEN=tally-session-token-for-tests+/=
export HARNESS_CONTAINER_TOKEN=tally-container-token-for-tests
export TALLY_TOKEN=tally-bearer-token-for-tests
export HARNESS_TOKENS="[\"$TALLY_TOKEN\"]"
export HARNESS_CREDENTIALS="[{\"key\": \"$AWS_ACCESS_KEY_ID\", \"secret\": \"$AWS_SECRET_ACCESS_KEY\"},
  {\"key\": \"$TALLY_TEST_SESSION_KEY\", \"secret\": \"$TALLY_TEST_SESSION_SECRET\", \"token\": \"$TALLY_TEST_SESSION_TOKEN\"}]"

python3 "$root/clients/harness/harness.py" --gateway "$gateway_port" --tally "http://127.0.0.1:$tally_port" \
  --dynamodb-proxy "$proxy_port" --dynamodb "$DYNAMODB_ENDPOINT" --control "$control_port" \
  >"$work/harness.log" 2>&1 &
harness=$!
trap 'kill "$harness" 2>/dev/null || true' EXIT INT TERM
wait_for "http://127.0.0.1:$control_port/counts" "$harness" "$work/harness.log"
TABLE_NAME="tally-clients-$RANDOM$RANDOM" TALLY_ADDR="127.0.0.1:$tally_port" \
  DYNAMODB_ENDPOINT="http://127.0.0.1:$proxy_port" \
  "$root/target/debug/tally" serve >"$work/serve.log" 2>&1 &
server=$!
trap 'kill "$server" "$harness" 2>/dev/null || true' EXIT INT TERM
wait_for "http://127.0.0.1:$tally_port/openapi.json" "$server" "$work/serve.log"

export TALLY_URL="http://127.0.0.1:$gateway_port" TALLY_HARNESS="http://127.0.0.1:$control_port"
export AWS_REGION=$HARNESS_REGION
"$@"
