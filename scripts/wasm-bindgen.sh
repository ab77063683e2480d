#!/usr/bin/env bash
# Installs the wasm-bindgen command line from crates.io, at the version of the wasm-bindgen
# crate in Cargo.lock (the two must match exactly), unless that version is installed; then
# prints the command's path. It binds the browser verifier's WebAssembly to the page
# (scripts/verify-page.sh). Without default features: those only let its test runner
# download browsers over TLS, which nothing here does.
#
# `--locked`, with the versions of its own lock file; a registry mirror that lacks one of
# them refuses that, and the install runs again without it (its own version stays exact).
# It goes where cargo installs (CARGO_INSTALL_ROOT, else CARGO_HOME, else ~/.cargo), named
# with `--root` so that the path printed is where it went.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
[ -n "$version" ] || { echo "wasm-bindgen.sh: no wasm-bindgen in Cargo.lock" >&2; exit 1; }
root=${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}
bin="$root/bin/wasm-bindgen"
install=(cargo install --quiet --no-default-features --root "$root" --version "=$version" wasm-bindgen-cli)
if [ "$("$bin" --version 2>/dev/null)" != "wasm-bindgen $version" ]; then
  echo "Installing wasm-bindgen-cli $version from crates.io (cargo install --locked)..." >&2
  if ! "${install[@]}" --locked >&2; then
    echo "cargo install --locked failed: installing wasm-bindgen-cli $version without --locked..." >&2
    "${install[@]}" >&2
  fi
fi
echo "$bin"
