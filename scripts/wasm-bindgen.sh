#!/usr/bin/env bash
# Installs the wasm-bindgen command line from crates.io, at the version of the wasm-bindgen
# crate in Cargo.lock (the two must match exactly), unless that version is installed; then
# prints the command's path. It binds the browser verifier's WebAssembly to the page
# (scripts/verify-page.sh). Without default features: those only let its test runner
# download browsers over TLS, which nothing here does. Not `--locked`: its lock file names
# versions that not every registry mirror carries yet; its own version is pinned exactly.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
[ -n "$version" ] || { echo "wasm-bindgen.sh: no wasm-bindgen in Cargo.lock" >&2; exit 1; }
bin="${CARGO_HOME:-$HOME/.cargo}/bin/wasm-bindgen"
if [ "$("$bin" --version 2>/dev/null)" != "wasm-bindgen $version" ]; then
  echo "Installing wasm-bindgen-cli $version from crates.io (cargo install)..." >&2
  cargo install --quiet --no-default-features --version "=$version" wasm-bindgen-cli >&2
fi
echo "$bin"
