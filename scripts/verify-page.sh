#!/usr/bin/env bash
# Builds the browser verifier as one static file, target/verify-page/verify.html: the page
# of web/verify.html with the WebAssembly of web/verifier (the files of src/domain/winners)
# inside it, base64. It loads nothing else, so it works from a disk, from any static host,
# and from `tally serve` at /verify.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/wasm-target.sh
cargo build --locked --release --quiet --target wasm32-unknown-unknown \
  --manifest-path web/verifier/Cargo.toml --target-dir target/verifier
mkdir -p target/verify-page
python3 - <<'PY'
import base64

wasm = open("target/verifier/wasm32-unknown-unknown/release/tally_verifier.wasm", "rb").read()
page = open("web/verify.html", encoding="utf-8").read()
assert page.count("WASM_BASE64") == 1, "web/verify.html holds one WASM_BASE64 placeholder"
with open("target/verify-page/verify.html", "w", encoding="utf-8") as out:
    out.write(page.replace("WASM_BASE64", base64.b64encode(wasm).decode()))
PY
echo "target/verify-page/verify.html"
