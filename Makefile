# Tally: the commands a person needs. See README.md.

.PHONY: run test check lint openapi bench cold-start build sam invoke clean

## Start DynamoDB Local (data in .dynamodb/) and the HTTP API on http://127.0.0.1:3000,
## with the browser verifier at /verify.
run:
	scripts/run-local.sh

## Install what the tests need and run every test: template lint and least-privilege
## check, unit and integration tests against a fresh DynamoDB Local (the browser verifier
## in headless Chromium among them), the HTTP API fuzzed against openapi.json with
## Schemathesis, Lambda binaries invoked through cargo lambda, and the PHP and TypeScript
## clients, their seed-flow examples and docs/integrate.md behind a stand-in for API Gateway;
## the docs' relative links and summaries. The Python tools go into target/python-tools;
## missing Debian packages are installed with apt, through sudo when not root.
test:
	scripts/check-docs.py
	scripts/pip-tool.sh cfn-lint aws-sam-translator >/dev/null
	target/python-tools/bin/cfn-lint template.yaml
	target/python-tools/bin/python3 scripts/check-template.py template.yaml
	scripts/browser.sh
	scripts/verify-page.sh
	scripts/with-dynamodb.sh scripts/workspace-tests.sh
	scripts/with-dynamodb.sh scripts/schemathesis.sh
	scripts/with-dynamodb.sh scripts/invoke-test.sh
	scripts/with-dynamodb.sh scripts/clients-test.sh

## The quick loop, Rust only (no DynamoDB Local, no browser): formatting, lints of every
## crate, and the unit tests of every crate.
check:
	cargo fmt --all -- --check
	cargo clippy --locked --workspace --all-targets -- -D warnings
	cargo test --locked --workspace --lib --bins

## Write the OpenAPI document (openapi.json) and the events' JSON Schemas
## (docs/events/*.schema.json) from the code; `cargo test` fails while they differ.
openapi:
	cargo run --locked --quiet -p tally-cli -- contract --openapi openapi.json --events docs/events

## Formatting and lints of every crate, as CI runs them (the browser verifier's
## WebAssembly too), the docs' links, and no file of code past 450 lines.
lint:
	scripts/check-docs.py
	scripts/check-file-sizes.py
	cargo fmt --all -- --check
	cargo clippy --locked --workspace --all-targets -- -D warnings
	scripts/wasm-target.sh
	cargo clippy --locked -p tally-verifier --target wasm32-unknown-unknown -- -D warnings

## Cold-start every Lambda function (init time, memory), draw the winners of large draws,
## sell out a draw with 64 concurrent buyers against the naive approach and one by lucky
## dip among numbers buyers chose and held, import orders in batches, post orders and buy
## tickets one per request (requests and WCU per call against the floor), audit a large
## period, measure the write rate and import parsing.
## BENCH_ARGS passes options.
bench:
	scripts/bench.sh $(BENCH_ARGS)

## Only the cold starts: each function's release binary against a local runtime API.
cold-start:
	scripts/bench.sh --skip-import-parse --skip-winners --skip-tickets --skip-bundles --skip-mixed-sale --skip-orders --skip-single --skip-audit --skip-write-rate --skip-refunds $(BENCH_ARGS)

## Build every Lambda function of template.yaml for arm64 (provided.al2023) with cargo
## lambda and print the bootstrap sizes (at most 8 MB each, or the build fails).
build:
	scripts/build-lambdas.sh

## SAM's own build with pinned tools, without Docker or AWS credentials:
## sam validate --lint, then sam build --beta-features (into .aws-sam/build).
sam:
	scripts/sam.sh

## Run one Lambda function on an event file, like `sam local invoke`, without Docker:
## make invoke FUNCTION=tickets EVENT=events/get-draw.json
invoke:
	scripts/invoke.sh $(FUNCTION) $(EVENT)

clean:
	cargo clean
	rm -rf .dynamodb scripts/dynamodb-local/node_modules web/test/node_modules \
	  clients/typescript/node_modules clients/typescript/dist
