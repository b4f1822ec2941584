#!/usr/bin/env bash
# Where a fresh server's first-run CPU goes, by thread, and whether the runtime's tiering work landed inside it: for
# each start of each given build, alternately, start the host, wait for its first PONG, then publish 50,000 x 16 B
# with the harness's C program (libnats) twice, 0.3 s apart. Prints per start the server's CPU at the PONG, each run's
# CPU (all threads, /proc/<pid>/task/*/schedstat) with the tiered-compilation worker's share (".NET Tiered Com") and
# the busiest threads, and the CPU between the runs. A first run whose tiering share is more than ~1 ms had the
# runtime's call-counting resume (or tier-1 compiles) inside it (docs/benchmarks.md, "first3" and "first4").
# Usage: scripts/first-run-threads.sh [N] [HOST_DLL...]   (default: 8 host/Broker.Host/bin/Release/net10.0/Broker.Host.dll)
# A variant of a build's runtime settings is a copy of its folder with Broker.Host.runtimeconfig.json edited.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/first-run-hosts.sh
. scripts/lib/first-run-hosts.sh
first_run_setup 8 "$@"

# Each thread's CPU: "tid name ns" lines (names with spaces joined by "_").
snapshot() {
  local task
  for task in /proc/"$1"/task/*; do
    printf '%s %s %s\n' "${task##*/}" "$(tr ' ' _ < "$task/comm" 2>/dev/null)" "$(cut -d' ' -f1 "$task/schedstat" 2>/dev/null)"
  done 2>/dev/null | awk 'NF == 3'
}

# CPU between two snapshots: "total-ms tiering-ms top-threads".
delta() {
  awk 'FNR == NR {before[$1] = $3; next}
       {d = $3 - before[$1]; total += d; if (d > 0) by[$2] += d; if ($2 ~ /Tiered/) tier += d}
       END {
         n = 0; top = ""
         for (k = 0; k < 3; k++) {best = ""; for (t in by) if (best == "" || by[t] > by[best]) best = t
           if (best == "") break; top = top (top ? "," : "") best ":" sprintf("%.1f", by[best] / 1e6); delete by[best]}
         printf "%.2f %.2f %s", total / 1e6, tier / 1e6, top
       }' "$1" "$2"
}

run() { "$work/natsbench" pubsub "nats://127.0.0.1:$1" bench.first 16 50000 1 0 | awk '{printf "%.2f", $1 / ($2 / 1e9) / 1e6}'; }

for ((i = 1; i <= runs; i++)); do
  for dll in "${hosts[@]}"; do
    port=$(free_port)
    start=$(date +%s%N)
    dotnet "$dll" -a 127.0.0.1 -p "$port" >/dev/null 2>&1 &
    pid=$!
    wait_for_pong "$port" "$pid" "$start"
    snapshot "$pid" > "$work/a"
    rate1=$(run "$port")
    snapshot "$pid" > "$work/b"
    sleep 0.3
    snapshot "$pid" > "$work/c"
    rate2=$(run "$port")
    snapshot "$pid" > "$work/d"
    kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
    pong=$(awk '{s += $3} END {printf "%.0f", s / 1e6}' "$work/a")
    read -r cpu1 tier1 top1 <<<"$(delta "$work/a" "$work/b")"
    read -r gap tiergap _ <<<"$(delta "$work/b" "$work/c")"
    read -r cpu2 tier2 _ <<<"$(delta "$work/c" "$work/d")"
    echo "start $i, $dll: CPU at PONG $pong ms; first run $rate1 M msgs/s, CPU $cpu1 ms (tiering $tier1; $top1); between $gap ms (tiering $tiergap); second run $rate2 M msgs/s, CPU $cpu2 ms (tiering $tier2)"
  done
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
