#!/usr/bin/env bash
# Adds Rust's wasm32-unknown-unknown standard library (the browser verifier) if it is missing.
set -euo pipefail
rustup target list --installed | grep -qx wasm32-unknown-unknown ||
  rustup target add wasm32-unknown-unknown
