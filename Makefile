# Tally: the commands a person needs. See README.md.

.PHONY: run test lint bench build invoke clean

## Start DynamoDB Local (data in .dynamodb/) and the HTTP API on http://127.0.0.1:3000.
run:
	scripts/run-local.sh

## Install what the tests need and run every test: template lint and least-privilege
## check, unit and integration tests against a fresh DynamoDB Local, and Lambda binaries
## invoked through cargo lambda.
test:
	scripts/pip-tool.sh cfn-lint
	cfn-lint template.yaml
	scripts/check-template.py template.yaml
	scripts/with-dynamodb.sh cargo test --locked
	scripts/with-dynamodb.sh scripts/invoke-test.sh

## Formatting and lints, as CI runs them.
lint:
	cargo fmt --all -- --check
	cargo clippy --locked --all-targets -- -D warnings

## Sell out a draw with 64 concurrent buyers against the naive approach, then import
## orders in batches against one per request. BENCH_ARGS passes options.
bench:
	cargo build --locked --release --bin tally
	scripts/with-dynamodb.sh target/release/tally bench $(BENCH_ARGS)

## Build every Lambda function for arm64 (provided.al2023) and print the bootstrap sizes.
build:
	scripts/build-lambdas.sh

## Run one Lambda function on an event file, like `sam local invoke`, without Docker:
## make invoke FUNCTION=tickets EVENT=events/get-draw.json
invoke:
	scripts/invoke.sh $(FUNCTION) $(EVENT)

clean:
	cargo clean
	rm -rf .dynamodb scripts/dynamodb-local/node_modules
