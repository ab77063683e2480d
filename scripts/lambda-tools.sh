# Sourced by the scripts that build Lambda functions for arm64:
#   source scripts/lambda-tools.sh NAME...   (tools pinned in scripts/requirements.txt)
# Installs the tools into one virtual environment, target/lambda-tools (scripts/pip-tool.sh),
# and puts it first on the PATH; adds Rust's arm64 standard library if missing.
#
# `make build` and `make sam` share this environment on purpose. cargo lambda runs Zig as
# `python3 -m ziglang` with the PATH's python3, and a build under another python3 counts
# as another configuration to cargo, which then rebuilds every crate. One environment
# keeps one set of compiled crates for both targets, and keeps SAM's many pinned
# dependencies out of the Python the other targets use.
lambda_tools="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/target/lambda-tools"
PYTHON_TOOLS=$lambda_tools "$(dirname "${BASH_SOURCE[0]}")/pip-tool.sh" "$@" >/dev/null
export PATH="$lambda_tools/bin:$PATH"
"$(dirname "${BASH_SOURCE[0]}")/arm64-target.sh"
