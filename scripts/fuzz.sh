#!/usr/bin/env bash
# A longer fuzz run than `make test` does: nested, long and malformed bodies on every
# route, against its own DynamoDB Local. The first argument is the number of random cases
# on top of the fixed ones (default 20000).
#
#   scripts/fuzz.sh 100000
set -euo pipefail

cd "$(dirname "$0")/.."
export TALLY_FUZZ_CASES="${1:-20000}"
scripts/with-dynamodb.sh cargo test --locked --test api fuzz::
