#!/usr/bin/env bash
# `make build`: every Lambda function of template.yaml for arm64 provided.al2023,
# cross-compiled with cargo lambda and Zig (both from PyPI, in target/lambda-tools), then
# the size of each bootstrap against its budget of 8 MB; a larger one fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lambda-tools.sh cargo-lambda ziglang
mapfile -t functions < <(scripts/lambda-functions.sh)
bins=()
for f in "${functions[@]}"; do bins+=(--bin "$f"); done
start=$SECONDS
cargo lambda build --release --arm64 --locked "${bins[@]}"
echo "cargo lambda build took $((SECONDS - start)) s"
scripts/bootstrap-sizes.sh target/lambda "${functions[@]}"
