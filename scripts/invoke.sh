#!/usr/bin/env bash
# `make invoke FUNCTION=tickets EVENT=events/get-draw.json`: runs one Lambda binary through
# the Lambda runtime protocol (cargo lambda watch + cargo lambda invoke) against DynamoDB
# Local, and prints the function's response.
#
# DynamoDB: $DYNAMODB_ENDPOINT when set, else the `make run` one on $DYNAMODB_PORT (8000),
# started here (data in .dynamodb/) if it is not running.
#
# The function runs as on Lambda, where the ticket functions refuse the public local
# deployment secret: it gets $TALLY_DEPLOYMENT_SECRET, else a random one generated once and
# kept in .dynamodb/deployment-secret, so that a purchase replayed in a later run matches.
#
# cargo lambda comes from the project's Python environment (scripts/pip-tool.sh), put
# first on the PATH, where cargo finds its subcommands.
set -euo pipefail

function=${1:?usage: invoke.sh FUNCTION EVENT_FILE}
event=${2:?usage: invoke.sh FUNCTION EVENT_FILE}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
PATH="$(scripts/pip-tool.sh cargo-lambda):$PATH"

pids=()
files=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -f "${files[@]}"
}
trap cleanup EXIT INT TERM

if [ -z "${DYNAMODB_ENDPOINT:-}" ]; then
  port=${DYNAMODB_PORT:-8000}
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    pids+=("$(DYNAMODB_LOG="$root/.dynamodb/dynamodb.log" scripts/dynamodb-local.sh start "$port" "$root/.dynamodb/data")")
  fi
  export DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
fi
export TABLE_NAME=${TABLE_NAME:-tally}
cargo build --quiet -p tally-cli
cargo build --quiet --bin "$function"
target/debug/tally create-table >/dev/null

# The events function publishes to EventBridge: locally, to a stand-in that logs each event
# to stderr (or $EVENT_SINK_LOG).
event_env=()
if [ "$function" = events ]; then
  port_file=$(mktemp)
  files+=("$port_file")
  python3 scripts/event-sink.py "$port_file" ${EVENT_SINK_LOG:+"$EVENT_SINK_LOG"} &
  pids+=($!)
  for _ in $(seq 1 40); do [ -s "$port_file" ] && break; sleep 0.1; done
  event_env=(--env-var "EVENT_BUS_NAME=tally-local" --env-var "EVENTBRIDGE_ENDPOINT=http://127.0.0.1:$(cat "$port_file")")
fi

secret=${TALLY_DEPLOYMENT_SECRET:-}
if [ -z "$secret" ]; then
  secret_file="$root/.dynamodb/deployment-secret"
  if [ ! -s "$secret_file" ]; then
    mkdir -p "$root/.dynamodb"
    (umask 077 && python3 -c 'import secrets; print(secrets.token_urlsafe(48))' >"$secret_file")
  fi
  secret=$(cat "$secret_file")
fi

invoke_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cargo lambda watch --quiet --ignore-changes --invoke-address 127.0.0.1 --invoke-port "$invoke_port" \
  --env-var "TABLE_NAME=$TABLE_NAME" --env-var "DYNAMODB_ENDPOINT=$DYNAMODB_ENDPOINT" \
  --env-var "RUST_LOG=${RUST_LOG:-warn}" --env-var "TALLY_DEPLOYMENT_SECRET=$secret" "${event_env[@]}" >"${INVOKE_LOG:-/dev/null}" 2>&1 &
pids+=($!)
for _ in $(seq 1 240); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$invoke_port") 2>/dev/null; then break; fi
  sleep 0.5
done
cargo lambda invoke "$function" --invoke-address 127.0.0.1 --invoke-port "$invoke_port" \
  --data-file "$event" --output-format json
echo
