#!/usr/bin/env bash
# Where a fresh server's first-run cost goes between first use and code quality, in server CPU per message (all
# threads, /proc/<pid>/task/*/schedstat), which the machine's load hardly moves. For each start of each given build,
# alternately: start the host, wait for its first PONG, then four runs of 50,000 x 16 B published by the harness's C
# program (libnats): A at once (the harness's "first run"), B 0.3 s later (first-use costs paid, still ReadyToRun
# code: the call-counting delay kept the publish path from being counted during A), C 2 s after B (the publish path
# was counted in B, so its tier-1 recompilation ran in those 2 s and, with dynamic PGO's second stage, partly in C),
# D 2 s after C (tier-1 code, the steady state). Also prints the CPU the tier-up took in the 2 s after B and the
# methods the JIT compiled from the first PONG to then (DOTNET_JitStdOutFile + DOTNET_JitDisasmSummary).
# Usage: scripts/first-run-tiers.sh [N] [HOST_DLL...]   (default: 3 host/Broker.Host/bin/Release/net10.0/Broker.Host.dll)
# Environment variables (DOTNET_TieredPGO=0, ...) pass through to the host.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/first-run-hosts.sh
. scripts/lib/first-run-hosts.sh
first_run_setup 3 "$@"
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d", s}'; }
jitted() { wc -l < "$1" 2>/dev/null || echo 0; }

# One run of 50,000: prints the server's CPU ns per message.
run_once() {
  local port=$1 pid=$2 before after
  before=$(cpu_ns "$pid")
  "$work/natsbench" pubsub "nats://127.0.0.1:$port" bench.first 16 50000 1 0 >/dev/null
  after=$(cpu_ns "$pid")
  echo $(( (after - before) / 50000 ))
}

for ((i = 1; i <= runs; i++)); do
  for dll in "${hosts[@]}"; do
    port=$(free_port)
    jit="$work/jit-$i.txt"
    rm -f "$jit"
    start=$(date +%s%N)
    DOTNET_JitStdOutFile="$jit" DOTNET_JitDisasmSummary=1 dotnet "$dll" -a 127.0.0.1 -p "$port" >/dev/null 2>&1 &
    pid=$!
    wait_for_pong "$port" "$pid" "$start"
    pong_cpu=$(( $(cpu_ns "$pid") / 1000000 )); pong_jit=$(jitted "$jit")
    a=$(run_once "$port" "$pid"); sleep 0.3
    b=$(run_once "$port" "$pid"); after_b=$(cpu_ns "$pid"); sleep 2
    tier_cpu=$(( ($(cpu_ns "$pid") - after_b) / 1000000 )); tier_jit=$(( $(jitted "$jit") - pong_jit ))
    c=$(run_once "$port" "$pid"); sleep 2
    d=$(run_once "$port" "$pid")
    kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
    echo "start $i, $dll: CPU at PONG $pong_cpu ms; ns/msg A $a, B $b, C $c, D $d; tier-up after B $tier_cpu ms CPU, $tier_jit methods JIT'd from PONG to then"
  done
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
