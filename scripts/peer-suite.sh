#!/usr/bin/env bash
# Runs the test suite of nats.c, the official NATS C client, against this broker (or, with --reference, against
# Debian's nats-server) — a standing check written by others (docs/interop.md records the runs).
#
#   scripts/peer-suite.sh [--reference] [--filter REGEX] [--build-dir DIR] NATS_C_SOURCE
#
# NATS_C_SOURCE is a checkout of nats.c v3.4.1 (the version of Debian's libnats-dev) that the person running this
# script fetched; nothing of it is kept in this repository. The script builds it once (CMake, static library, no
# streaming, into .artifacts/nats.c-build unless --build-dir says otherwise), puts this repository's scripts/nats-server
# launcher first on PATH as nats.c's harness expects (it starts `nats-server` with its own flags), and runs its ctest
# suite one test at a time. nats.c waits about two seconds for a server to start: run it on a quiet machine.
#
# Prints "N passed, N failed" last and keeps the full log in .artifacts/peer-suite-<broker|reference>.log.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

log() { printf '[peer-suite] %s\n' "$*" >&2; }

reference=false
filter=""
build=""
source=""
while [ $# -gt 0 ]; do
  case "$1" in
    --reference) reference=true ;;
    --filter) filter="$2"; shift ;;
    --build-dir) build="$2"; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) source="$1" ;;
  esac
  shift
done

if [ -z "$source" ] || [ ! -f "$source/CMakeLists.txt" ] || [ ! -f "$source/test/list.txt" ]; then
  log "usage: $0 [--reference] [--filter REGEX] [--build-dir DIR] NATS_C_SOURCE (a nats.c v3.4.1 checkout)"
  exit 2
fi
source=$(cd "$source" && pwd)
build="${build:-$root/.artifacts/nats.c-build}"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    log "need root to run: $*"; return 1; fi
}

need_apt=()
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc)
command -v make >/dev/null 2>&1 || need_apt+=(make)
[ -f /usr/include/openssl/ssl.h ] || need_apt+=(libssl-dev)
command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || [ -x /usr/bin/nats-server ] || need_apt+=(nats-server)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "installing ${need_apt[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

version=$(grep -o 'NATS_VERSION_STRING *"[^"]*"' "$source/src/version.h" 2>/dev/null | grep -o '"[^"]*"' | tr -d '"' || true)
[ "$version" = "3.4.1" ] || log "warning: nats.c $version, not 3.4.1: the figures in docs/interop.md are for 3.4.1"

if [ ! -x "$build/test/testsuite" ]; then
  log "building nats.c $version in $build"
  mkdir -p "$build"
  (cd "$build" && cmake "$source" -DCMAKE_BUILD_TYPE=Release -DNATS_BUILD_STREAMING=OFF -DNATS_BUILD_EXAMPLES=OFF \
      -DNATS_BUILD_TLS_USE_OPENSSL_1_1_API=ON -DNATS_BUILD_LIB_SHARED=OFF >/dev/null \
    && make -j"$(nproc)" testsuite >/dev/null)
fi

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
if $reference; then
  server=$(command -v nats-server || true)
  [ -n "$server" ] || server=/usr/sbin/nats-server
  [ -x "$server" ] || server=/usr/bin/nats-server
  name=reference
else
  if ! ls "$root"/host/Broker.Host/bin/Release/net*/Broker.Host.dll >/dev/null 2>&1; then
    log "building the broker"
    dotnet build Broker.sln -c Release -nologo -v quiet >/dev/null
  fi
  server="$root/scripts/nats-server"
  name=broker
fi
ln -s "$server" "$bin/nats-server"
export PATH="$bin:$PATH"
# nats.c skips its JetStream and newer-feature tests unless it is told the server's version, which it parses from
# `nats-server -v` as printed by either server.
NATS_TEST_SERVER_VERSION=$(nats-server -v 2>&1 | head -1)
export NATS_TEST_SERVER_VERSION
log "server: $NATS_TEST_SERVER_VERSION ($server)"

mkdir -p "$root/.artifacts"
output="$root/.artifacts/peer-suite-$name.log"
# nats.c's list holds its streaming (STAN) tests whether or not they are built; they need a streaming server.
args=(--output-on-failure --timeout 300 -E '^Test_Stan')
[ -n "$filter" ] && args+=(-R "$filter")
set +e
(cd "$build" && ctest "${args[@]}") >"$output" 2>&1
set -e

# ctest's own summary: "98% tests passed, 4 tests failed out of 255".
summary=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$output" | tail -1)
if [ -z "$summary" ]; then
  log "ctest printed no summary; see $output"
  echo "0 passed, 1 failed"
  exit 1
fi
failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$summary")
total=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$summary")
passed=$((total - failed))
sed -n '/The following tests FAILED/,$p' "$output" | grep -E '^\s+[0-9]+ - ' | sed 's/^\s*/[peer-suite] failed: /' >&2 || true
log "log: $output"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
