#!/usr/bin/env bash
# Measures server start-up as a test suite feels it: from launching the process to the first PONG on its NATS port
# (INFO read, CONNECT + PING sent, PONG received), for nats-server and for our host, alternately, N times each.
# Prints each run and the medians in milliseconds. Usage: scripts/startup-time.sh [N] [extra host args...]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
shift || true

if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >/dev/null
fi
nats_server=$(command -v nats-server || echo /usr/sbin/nats-server)
host_dll=${HOST_DLL:-host/Broker.Host/bin/Release/net10.0/Broker.Host.dll}
[ -f "$host_dll" ] || dotnet build host/Broker.Host -c Release -nologo -v quiet >/dev/null

# shellcheck source=scripts/lib/first-pong.sh
. scripts/lib/first-pong.sh

# One start: launch, poll the port until a PING gets its PONG, print the elapsed milliseconds, stop the server.
measure() {
  local port start pid elapsed
  port=$(free_port)
  start=$(date +%s%N)
  "$@" -a 127.0.0.1 -p "$port" >/dev/null 2>&1 &
  pid=$!
  wait_for_pong "$port" "$pid" "$start" || return 1
  elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
  kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  echo "$elapsed"
}

nats=(); ours=()
for ((i = 1; i <= runs; i++)); do
  n=$(measure "$nats_server"); o=$(measure dotnet "$host_dll" "$@")
  nats+=("$n"); ours+=("$o")
  echo "run $i: nats-server ${n} ms, ours ${o} ms"
done
nm=$(printf '%s\n' "${nats[@]}" | median); om=$(printf '%s\n' "${ours[@]}" | median)
echo "median: nats-server ${nm} ms, ours ${om} ms (load average $(cut -d' ' -f1-3 /proc/loadavg))"
