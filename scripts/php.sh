#!/usr/bin/env bash
# Installs what the PHP client's tests need from Debian's packages, with apt (through sudo
# when not root): php-cli, php-curl and PHPUnit (Composer's registry is not reachable from
# every machine that runs the tests, so the package's PSR-4 autoloading runs without
# Composer there).
set -euo pipefail
if ! command -v phpunit >/dev/null || ! php -m 2>/dev/null | grep -qx curl; then
  "$(dirname "$0")/apt-install.sh" php-cli php-curl phpunit
fi
