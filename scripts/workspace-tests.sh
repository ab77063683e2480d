#!/usr/bin/env bash
# Every test of the workspace, as `cargo test --workspace` runs them, with the command-line
# crate's tests running beside the others rather than after them: its walkthrough of
# docs/api.md spends about a minute idle, waiting for beacon rounds. The build comes first
# (cargo holds its lock only while it builds), and the crate's output follows the rest.
#
# Installs what the tests run besides cargo: curl (docs/api.md's walkthrough), and py-ecc
# in the project's Python environment (scripts/pip-tool.sh), put first on the PATH: the
# tests run scripts/verify-draw.py with the PATH's python3, which checks beacon
# signatures with it.
#
# Four test threads on two cores: most integration tests wait on DynamoDB Local, on
# Retry-After or on a clock, so four overlap those waits. The figures are in
# docs/notebook/2026-12-06-four-test-threads.md.
set -euo pipefail
here=$(dirname "$0")
"$here/apt-install.sh" curl
PATH="$("$here/pip-tool.sh" py-ecc):$PATH"

cargo test --locked --workspace --no-run
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --locked -p tally-cli >"$log" 2>&1 &
cli=$!
rest=0
cargo test --locked --workspace --exclude tally-cli -- --test-threads 4 || rest=$?
cli_status=0
wait "$cli" || cli_status=$?
echo "--- tally-cli tests" >&2
cat "$log"
if [ "$rest" -ne 0 ] || [ "$cli_status" -ne 0 ]; then
    echo "tests failed (workspace without tally-cli: exit $rest; tally-cli: exit $cli_status)" >&2
    exit 1
fi
