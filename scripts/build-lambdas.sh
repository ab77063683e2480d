#!/usr/bin/env bash
# `make build`: every Lambda function of template.yaml for arm64 provided.al2023,
# cross-compiled with cargo lambda and Zig (both from PyPI), then the size of each
# bootstrap against its budget of 8 MB (8,000,000 bytes); a larger one fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/pip-tool.sh cargo-lambda
scripts/pip-tool.sh ziglang
scripts/arm64-target.sh
mapfile -t functions < <(scripts/lambda-functions.sh)
bins=()
for f in "${functions[@]}"; do bins+=(--bin "$f"); done
cargo lambda build --release --arm64 --locked "${bins[@]}"
scripts/bootstrap-sizes.sh target/lambda "${functions[@]}"
