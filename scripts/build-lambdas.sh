#!/usr/bin/env bash
# `make build`: every Lambda function for arm64 provided.al2023, cross-compiled with
# cargo lambda and Zig (both from PyPI), then the size of each bootstrap.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/pip-tool.sh cargo-lambda
scripts/pip-tool.sh ziglang
rustup target list --installed | grep -qx aarch64-unknown-linux-gnu ||
  rustup target add aarch64-unknown-linux-gnu
functions=(tickets orders import events)
bins=()
for f in "${functions[@]}"; do bins+=(--bin "$f"); done
cargo lambda build --release --arm64 --locked "${bins[@]}"
for f in "${functions[@]}"; do
  printf '%-8s %8s KiB  target/lambda/%s/bootstrap\n' "$f" \
    "$(( $(stat -c %s "target/lambda/$f/bootstrap") / 1024 ))" "$f"
done
