#!/usr/bin/env bash
# Installs the Debian packages named that are not installed yet, with apt-get: as root
# directly, otherwise through sudo (which may ask for a password). Installs nothing when
# every one is installed.
#
#   scripts/apt-install.sh chromium curl
set -euo pipefail
missing=()
for package in "$@"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'ok installed' ||
    missing+=("$package")
done
[ "${#missing[@]}" -gt 0 ] || exit 0
command -v apt-get >/dev/null ||
  { echo "apt-install.sh: no apt-get here: install ${missing[*]} yourself" >&2; exit 1; }
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null ||
    { echo "apt-install.sh: installing ${missing[*]} needs root or sudo" >&2; exit 1; }
  as_root=(sudo)
fi
echo "Installing ${missing[*]} with apt-get${as_root:+ (sudo)}..." >&2
"${as_root[@]}" apt-get update -qq >&2
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
