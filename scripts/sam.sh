#!/usr/bin/env bash
# `make sam`: SAM's own build, as a new user runs it, with pinned tools and neither Docker
# nor AWS credentials: `sam validate --lint`, then `sam build --beta-features`, which
# builds every function of template.yaml with rust-cargolambda for arm64; then the size of
# each bootstrap in .aws-sam/build/ against its budget (scripts/bootstrap-sizes.sh).
#
# aws-sam-cli, cargo-lambda and ziglang (scripts/requirements.txt) come from the
# environment that `make build` uses too (scripts/lambda-tools.sh). SAM finds `cargo`
# and `cargo-lambda` on the PATH; cargo lambda finds Zig as `python3 -m ziglang`, the
# PATH's python3 being that environment's.
set -euo pipefail
cd "$(dirname "$0")/.."
# Installed together, so that pip resolves SAM's pins and ours at once.
source scripts/lambda-tools.sh aws-sam-cli cfn-lint cargo-lambda ziglang
# No credentials, no instance metadata to ask for a region or credentials (they would only
# time out here), no telemetry. A region is named because SAM wants one to validate.
export AWS_REGION=${AWS_REGION:-us-east-1} AWS_EC2_METADATA_DISABLED=true SAM_CLI_TELEMETRY=0
echo "Tools: $(sam --version), $(cargo lambda --version), zig $(python3 -m ziglang version)" >&2

sam validate --lint --template-file template.yaml
start=$SECONDS
sam build --beta-features --template-file template.yaml
echo "sam build took $((SECONDS - start)) s"
mapfile -t built < <(cd .aws-sam/build && for d in */; do
  [ -f "$d/bootstrap" ] && echo "${d%/}"
done)
expected=$(scripts/lambda-functions.sh | wc -l)
if [ "${#built[@]}" -ne "$expected" ]; then
  echo "sam build made ${#built[@]} bootstraps for $expected functions of template.yaml" >&2
  exit 1
fi
scripts/bootstrap-sizes.sh .aws-sam/build "${built[@]}"
