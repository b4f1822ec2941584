#!/usr/bin/env bash
# Measures a fresh server's first second as the comparison's "first run" row sees it, with figures the machine's load
# hardly moves: for nats-server and for each given build of our host, alternately, N times each, start the server,
# wait for its first PONG, then publish 50,000 messages of 16 B with the harness's C program (libnats) twice. Prints per
# start: the time to the first PONG, the server's CPU time at that moment (all threads, /proc/<pid>/task/*/schedstat),
# and for each of the two runs msgs/s and the server's CPU nanoseconds per message; then the medians.
# Usage: scripts/first-run.sh [N] [pub|pubsub] [HOST_DLL...]   (default: 6 pub host/Broker.Host/bin/Release/net10.0)
# DELAY=seconds waits that long after the first PONG before the first run (the start-up tail excluded).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-6}
mode=${2:-pub}
shift 2 || shift $#
hosts=("$@")
[ ${#hosts[@]} -gt 0 ] || hosts=(host/Broker.Host/bin/Release/net10.0/Broker.Host.dll)
for dll in "${hosts[@]}"; do
  if [ ! -f "$dll" ]; then
    [ "$dll" = host/Broker.Host/bin/Release/net10.0/Broker.Host.dll ] || { echo "no $dll" >&2; exit 1; }
    dotnet build host/Broker.Host -c Release -nologo -v quiet >/dev/null
  fi
done

if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >/dev/null
fi
if ! pkg-config --exists libnats 2>/dev/null || ! command -v gcc >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libnats-dev gcc pkg-config >/dev/null
fi
nats_server=$(command -v nats-server || echo /usr/sbin/nats-server)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2046
gcc -O2 -o "$work/natsbench" bench/Broker.Compare/Load/C/natsbench.c $(pkg-config --cflags --libs libnats)

# shellcheck source=scripts/lib/first-pong.sh
. scripts/lib/first-pong.sh
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d", s}'; }
subscribers() { [ "$mode" = pubsub ] && echo 1 || echo 0; }

# One run: prints "msgs/s cpu-ns-per-message".
run_once() {
  local port=$1 pid=$2 before after out
  before=$(cpu_ns "$pid")
  out=$("$work/natsbench" pubsub "nats://127.0.0.1:$port" bench.first 16 50000 1 "$(subscribers)")
  after=$(cpu_ns "$pid")
  awk -v o="$out" -v c=$((after - before)) 'BEGIN {split(o, f, " "); printf "%d %d", f[1] / (f[2] / 1e9), c / f[1]}'
}

# One start: prints "ms-to-PONG cpu-ms-at-PONG rate1 cpu1 rate2 cpu2".
measure() {
  local port pid start ready cpu first second
  port=$(free_port)
  start=$(date +%s%N)
  "$@" -a 127.0.0.1 -p "$port" >/dev/null 2>&1 &
  pid=$!
  wait_for_pong "$port" "$pid" "$start" || return 1
  ready=$(( ($(date +%s%N) - start) / 1000000 ))
  cpu=$(( $(cpu_ns "$pid") / 1000000 ))
  sleep "${DELAY:-0}"
  first=$(run_once "$port" "$pid")
  second=$(run_once "$port" "$pid")
  kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  echo "$ready $cpu $first $second"
}

names=(nats-server "${hosts[@]}")
declare -A results
for ((i = 1; i <= runs; i++)); do
  for name in "${names[@]}"; do
    if [ "$name" = nats-server ]; then r=$(measure "$nats_server"); else r=$(measure dotnet "$name"); fi
    results[$name]+="$r"$'\n'
    read -r ready cpu rate1 cpu1 rate2 cpu2 <<<"$r"
    echo "start $i, $name: PONG after $ready ms (CPU $cpu ms); first run $rate1 msgs/s, $cpu1 ns/msg; second $rate2 msgs/s, $cpu2 ns/msg"
  done
done
for name in "${names[@]}"; do
  col() { printf '%s' "${results[$name]}" | awk -v c="$1" 'NF {print $c}' | median; }
  echo "median, $name: PONG after $(col 1) ms (CPU $(col 2) ms); first run $(col 3) msgs/s, $(col 4) ns/msg; second $(col 5) msgs/s, $(col 6) ns/msg"
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
