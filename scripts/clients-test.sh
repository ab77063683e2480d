#!/usr/bin/env bash
# Tests the official clients (clients/typescript, clients/php) and docs/integrate.md
# against `tally serve` behind a stand-in for API Gateway that checks every signature
# with botocore and injects faults (clients/harness/): each client's tests, both seed
# flows of each as concurrent OS processes with an independent check, then every code
# block of docs/integrate.md as written. Installs what it needs: botocore in the project's
# Python environment (scripts/pip-tool.sh), first on the PATH here so that every python3
# below has it; curl, PHP and the TypeScript client's packages. Needs DYNAMODB_ENDPOINT:
#
#   scripts/with-dynamodb.sh scripts/clients-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DYNAMODB_ENDPOINT:?run through scripts/with-dynamodb.sh}"

PATH="$(scripts/pip-tool.sh botocore):$PATH"
scripts/apt-install.sh curl
scripts/php.sh
scripts/npm-ci.sh clients/typescript openapi-fetch
cargo build --locked --quiet -p tally-cli

start=$SECONDS
clients/harness/run.sh bash -c '
  set -euo pipefail
  (cd clients/typescript && npm test && npm run --silent examples)
  (cd clients/php && phpunit --configuration phpunit.xml.dist)
  php clients/php/examples/sell-out.php 4 200
  php clients/php/examples/order-systems.php 3 120
  python3 clients/harness/guide.py docs/integrate.md
'
echo "the clients' tests took $((SECONDS - start)) s"
