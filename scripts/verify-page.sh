#!/usr/bin/env bash
# Builds the browser verifier as one static file, target/verify-page/verify.html: the page
# of web/verify.html with the WebAssembly of web/verifier (the domain's check of a draw)
# and its wasm-bindgen glue inside it, the WebAssembly in base64. It loads nothing else,
# so it works from a disk, from any static host, and from `tally serve` at /verify.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/wasm-target.sh
bindgen=$(scripts/wasm-bindgen.sh)
# Debug info stripped, not every symbol: stripping symbols drops the section where
# wasm-bindgen reads which WebAssembly features the build uses. The function names it
# removes itself, with the producers section.
CARGO_PROFILE_RELEASE_STRIP=debuginfo \
  cargo build --locked --release --quiet -p tally-verifier --target wasm32-unknown-unknown
mkdir -p target/verify-page
# no-modules: a classic script defining `wasm_bindgen`, which the page inlines.
"$bindgen" --target no-modules --no-typescript --remove-name-section --remove-producers-section \
  --out-dir target/verify-page/bindgen \
  target/wasm32-unknown-unknown/release/tally_verifier.wasm
python3 - <<'PY'
import base64

folder = "target/verify-page/bindgen"
wasm = open(f"{folder}/tally_verifier_bg.wasm", "rb").read()
glue = open(f"{folder}/tally_verifier.js", encoding="utf-8").read()
assert "</script" not in glue, "the glue cannot be inlined in a script element"
page = open("web/verify.html", encoding="utf-8").read()
for placeholder in ("WASM_BASE64", "VERIFIER_GLUE"):
    assert page.count(placeholder) == 1, f"web/verify.html holds one {placeholder} placeholder"
page = page.replace("VERIFIER_GLUE", glue).replace("WASM_BASE64", base64.b64encode(wasm).decode())
with open("target/verify-page/verify.html", "w", encoding="utf-8") as out:
    out.write(page)
PY
echo "target/verify-page/verify.html"
