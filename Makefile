# Tally: the commands a person needs. See README.md.

.PHONY: run test lint bench build clean

## Start DynamoDB Local (data in .dynamodb/) and the HTTP API on http://127.0.0.1:3000.
run:
	scripts/run-local.sh

## Install what the tests need and run every test against a fresh DynamoDB Local.
test:
	scripts/with-dynamodb.sh cargo test --locked

## Formatting and lints, as CI runs them.
lint:
	cargo fmt --all -- --check
	cargo clippy --locked --all-targets -- -D warnings

## Sell out a draw with 64 concurrent buyers, Tally against the naive approach.
bench:
	cargo build --locked --release --bin tally
	scripts/with-dynamodb.sh target/release/tally bench $(BENCH_ARGS)

clean:
	cargo clean
	rm -rf .dynamodb scripts/dynamodb-local/node_modules
