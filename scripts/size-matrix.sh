#!/usr/bin/env bash
# Measures the arm64 bootstrap sizes of every function of template.yaml under release
# profile settings given as CARGO_PROFILE_RELEASE_* overrides, one setting per argument:
#
#   scripts/size-matrix.sh "LTO=fat CODEGEN_UNITS=1" "LTO=fat CODEGEN_UNITS=1 OPT_LEVEL=s"
#
# An empty argument ("") measures Cargo.toml's own profile. Each setting is one full
# release build (minutes each); cargo keeps the artifacts of each apart, so measuring one
# again only relinks. Prints a Markdown row per setting: sizes in bytes and build time.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lambda-tools.sh cargo-lambda ziglang
mapfile -t functions < <(scripts/lambda-functions.sh)
bins=()
for f in "${functions[@]}"; do bins+=(--bin "$f"); done
echo "| setting | $(printf '%s | ' "${functions[@]}")build |"
echo "| --- | $(printf -- '--- | %.0s' "${functions[@]}")--- |"
for setting in "$@"; do
  overrides=()
  for pair in $setting; do overrides+=("CARGO_PROFILE_RELEASE_$pair"); done
  start=$SECONDS
  env "${overrides[@]}" cargo lambda build --quiet --release --arm64 --locked "${bins[@]}" >&2
  sizes=()
  for f in "${functions[@]}"; do sizes+=("$(stat -c %s "target/lambda/$f/bootstrap")"); done
  echo "| ${setting:-Cargo.toml} | $(printf '%s | ' "${sizes[@]}")$((SECONDS - start)) s |"
done
