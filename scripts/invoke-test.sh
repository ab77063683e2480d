#!/usr/bin/env bash
# Runs Lambda binaries through the Lambda runtime protocol (cargo lambda) on event files and
# checks their answers: an HTTP function of each kind and the SQS import function.
# Needs DYNAMODB_ENDPOINT (scripts/with-dynamodb.sh sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DYNAMODB_ENDPOINT:?run through scripts/with-dynamodb.sh}"
export TABLE_NAME="tally-invoke-$RANDOM$RANDOM"
stderr_file=$(mktemp)
trap 'rm -f "$stderr_file"' EXIT

passed=0
failed=0
# check NAME FUNCTION EVENT PYTHON_EXPRESSION_ON_response
check() {
  local name=$1 function=$2 event=$3 expression=$4 output
  if output=$(scripts/invoke.sh "$function" "$event" 2>"$stderr_file") &&
    RESPONSE="$output" python3 -c "import json, os, sys; response = json.loads(os.environ['RESPONSE']); sys.exit(0 if ($expression) else 1)"; then
    echo "invoke $name ... ok"
    passed=$((passed + 1))
  else
    echo "invoke $name ... FAILED"
    echo "$output"
    cat "$stderr_file"
    failed=$((failed + 1))
  fi
}

check "tickets: create-draw.json answers 201" tickets events/create-draw.json \
  'response["statusCode"] == 201 and json.loads(response["body"])["draw_id"] == "summer-2026"'
check "orders: put-series.json answers 201" orders events/put-series.json \
  'response["statusCode"] == 201'
check "import: sqs-import.json reports only the retryable message" import events/sqs-import.json \
  'response["batchItemFailures"] == [{"itemIdentifier": "50d18fa7-unknown-series"}]'
check "events: dynamodb-stream.json publishes every fact" events events/dynamodb-stream.json \
  'response["batchItemFailures"] == []'

echo "invoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
