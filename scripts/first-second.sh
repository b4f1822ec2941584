#!/usr/bin/env bash
# Where a fresh host's first second goes, in counts the machine's load hardly moves: starts our host (a build's
# Broker.Host.dll) with the runtime's JIT listing (DOTNET_JitStdOutFile + DOTNET_JitDisasmSummary: every method the JIT
# compiles, with its tier, in order), and cuts that list at four points: "Broker is ready" in its log (start-up), the
# first PONG of a CONNECT + PING (first connection), after 50,000 publishes of 16 B by the harness's C program (first
# run), and one second later (tier-up). Prints per phase the methods compiled by tier and by kind, the log's timestamps
# from process start, and the server's CPU time at each point (/proc/<pid>/task/*/schedstat).
# Usage: scripts/first-second.sh [HOST_DLL] [extra host arguments...]   (default host/Broker.Host/bin/Release/net10.0)
# KEEP=dir keeps the JIT list and the log there. Environment variables (DOTNET_*) pass through to the host.
set -euo pipefail
cd "$(dirname "$0")/.."
dll=${1:-host/Broker.Host/bin/Release/net10.0/Broker.Host.dll}
shift || true
[ -f "$dll" ] || { echo "no $dll" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2046
gcc -O2 -o "$work/natsbench" bench/Broker.Compare/Load/C/natsbench.c $(pkg-config --cflags --libs libnats)
# shellcheck source=scripts/lib/first-pong.sh
. scripts/lib/first-pong.sh
cpu_ms() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d", s / 1e6}'; }
lines() { wc -l < "$work/jit.txt" 2>/dev/null || echo 0; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

port=$(free_port)
start=$(date +%s%N)
DOTNET_JitStdOutFile="$work/jit.txt" DOTNET_JitDisasmSummary=1 dotnet "$dll" -a 127.0.0.1 -p "$port" "$@" >"$work/log.txt" 2>&1 &
pid=$!
until grep -q "Broker is ready" "$work/log.txt" 2>/dev/null; do
  kill -0 "$pid" 2>/dev/null || { cat "$work/log.txt"; exit 1; }
  sleep 0.002
done
ready_ms=$(ms_since "$start"); ready_cpu=$(cpu_ms "$pid"); ready_jit=$(lines)
wait_for_pong "$port" "$pid" "$start"
pong_ms=$(ms_since "$start"); pong_cpu=$(cpu_ms "$pid"); pong_jit=$(lines)
"$work/natsbench" pubsub "nats://127.0.0.1:$port" bench.first 16 50000 1 0 >/dev/null
run_ms=$(ms_since "$start"); run_cpu=$(cpu_ms "$pid"); run_jit=$(lines)
sleep 1
late_ms=$(ms_since "$start"); late_cpu=$(cpu_ms "$pid"); late_jit=$(lines)
kill "$pid"; wait "$pid" || true

echo "log (ms after the process was launched; the runtime starts before the first line):"
awk -v s="$start" '{split($3, t, "[:.]"); d = substr($2,1); cmd = "date -d \"" d " " t[1] ":" t[2] ":" t[3] "\" +%s"; cmd | getline e; close(cmd); ms = (e * 1e9 + t[4] * 1000 - s) / 1e6; $1 = ""; $2 = ""; $3 = ""; printf "  %6d ms %s\n", ms, $0}' "$work/log.txt" | grep -v "Trapped\|shutting\|stopped" || true
printf '%-34s %8s %8s %8s\n' "phase (end point)" "wall ms" "CPU ms" "JIT'd"
printf '%-34s %8s %8s %8s\n' "start-up (Broker is ready)" "$ready_ms" "$ready_cpu" "$ready_jit"
printf '%-34s %8s %8s %8s\n' "first connection (first PONG)" "$pong_ms" "$pong_cpu" "$((pong_jit - ready_jit))"
printf '%-34s %8s %8s %8s\n' "first run (50,000 x 16 B)" "$run_ms" "$run_cpu" "$((run_jit - pong_jit))"
printf '%-34s %8s %8s %8s\n' "one second later (tier-up)" "$late_ms" "$late_cpu" "$((late_jit - run_jit))"
classify() {
  awk '{
    tier = $0; sub(/.*\[/, "", tier); sub(/,.*/, "", tier)
    m = $0; sub(/^ *[0-9]+: JIT compiled /, "", m)
    kind = "other framework"
    if (m ~ /^\(dynamicClass\)/) kind = "IL stubs, dynamic methods"
    else if (m ~ /^Broker\./) kind = "Broker.*"
    else if (m ~ /System\.Text\.Json/) kind = "System.Text.Json"
    else if (m ~ /^Microsoft\.Extensions/) kind = "Microsoft.Extensions"
    else if (m ~ /^Serilog/) kind = "Serilog"
    else if (m ~ /^McMaster/) kind = "McMaster.NETCore.Plugins"
    else if (m ~ /Broker\./) kind = "framework generic over Broker types"
    c[tier " | " kind]++
  } END { for (k in c) printf "    %5d  %s\n", c[k], k }' | sort -k1,1nr
}
for phase in "start-up:1:$ready_jit" "first connection:$((ready_jit + 1)):$pong_jit" "first run:$((pong_jit + 1)):$run_jit" "tier-up:$((run_jit + 1)):$late_jit"; do
  IFS=: read -r name from to <<<"$phase"
  echo "$name: tier | kind"
  sed -n "${from},${to}p" "$work/jit.txt" | classify
done
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP"; cp "$work/jit.txt" "$work/log.txt" "$KEEP/"; echo "kept in $KEEP"; fi
