#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs what the tests use (the Go reference nats-server, the C
# client, Node.js packages for the nats.js interop tests), runs every test project, and ends with one line
# "N passed, N failed". Exits non-zero on any failure. Every test has its own timeout; --blame-hang-timeout kills a
# test host that hangs anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

log() { printf '[test.sh] %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    log "need root to run: $*"; return 1; fi
}

# Debian packages the tests use.
need_apt=()
command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || need_apt+=(nats-server)
[ -f /usr/include/nats/nats.h ] || need_apt+=(libnats-dev)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs npm)
# Mosquitto's clients for the MQTT interop tests, and its broker for the MQTT benchmark rows.
command -v mosquitto_pub >/dev/null 2>&1 || need_apt+=(mosquitto-clients)
command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || need_apt+=(mosquitto)
# Headless browser for the WebSocket browser test.
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "installing ${need_apt[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Node.js packages for the nats.js interop tests (pinned by package-lock.json).
for dir in tests/interop/js; do
  if [ -f "$dir/package.json" ] && [ ! -d "$dir/node_modules" ]; then
    log "npm ci in $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done

results="$root/.artifacts/test-results"
rm -rf "$results"
mkdir -p "$results"

log "building"
dotnet build Broker.sln -c Release -nologo -v quiet

log "testing"
set +e
dotnet test Broker.sln -c Release --no-build -nologo \
  --logger "trx" --results-directory "$results" \
  --blame-hang-timeout 5m --blame-hang-dump-type none \
  -- RunConfiguration.TestSessionTimeout=1500000
status=$?
set -e

# CI reads one closing line; dotnet test's own summary is not recognised, so count from the TRX files.
passed=0
failed=0
for trx in "$results"/*.trx; do
  [ -f "$trx" ] || continue
  counters=$(grep -o '<Counters [^>]*>' "$trx" | head -n 1)
  p=$(sed -n 's/.* passed="\([0-9]*\)".*/\1/p' <<<"$counters")
  f=$(sed -n 's/.* failed="\([0-9]*\)".*/\1/p' <<<"$counters")
  e=$(sed -n 's/.* error="\([0-9]*\)".*/\1/p' <<<"$counters")
  t=$(sed -n 's/.* timeout="\([0-9]*\)".*/\1/p' <<<"$counters")
  a=$(sed -n 's/.* aborted="\([0-9]*\)".*/\1/p' <<<"$counters")
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0} + ${e:-0} + ${t:-0} + ${a:-0}))
done

if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  # The runner failed without a counted test failure (a crashed or hung test host): count it as a failure.
  failed=1
fi

echo "$passed passed, $failed failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
