#!/usr/bin/env bash
# Adds Rust's aarch64-unknown-linux-gnu standard library (Lambda's arm64) if it is missing.
set -euo pipefail
rustup target list --installed | grep -qx aarch64-unknown-linux-gnu ||
  rustup target add aarch64-unknown-linux-gnu
