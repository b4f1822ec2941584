#!/usr/bin/env bash
# Coverage-guided fuzzing of every parser that takes outside bytes (fuzz/Broker.Fuzz targets) with SharpFuzz and
# afl++. Usage:
#   scripts/fuzz.sh [target|all] [budget]
# budget: executions per target (default 10000000, what docs/reliability.md promises), or a time limit per target
# such as 300s, 10m or 1h. Installs afl++ (Debian package) and the SharpFuzz command-line tool on a fresh machine,
# publishes the harness, instruments the broker assemblies, runs afl-fuzz per target on one core, copies crash and
# hang inputs to fuzz/regressions/<target>/ and writes the figures into docs/reliability.md, section "Fuzzing".
# Environment: FUZZ_CPU (core to bind, default 1), FUZZ_TIMEOUT_MS (afl hang limit per input, default 5000).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

log() { printf '[fuzz.sh] %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    log "need root to run: $*"; return 1; fi
}

target=${1:-all}
budget=${2:-10000000}
cpu=${FUZZ_CPU:-1}
timeout_ms=${FUZZ_TIMEOUT_MS:-5000}
work=$root/.artifacts/fuzz
tools=$work/tools
out=$work/bin
findings=$work/findings
command_line="scripts/fuzz.sh $*"

case $budget in
  *s) limit=(-V "${budget%s}") ;;
  *m) limit=(-V "$(( ${budget%m} * 60 ))") ;;
  *h) limit=(-V "$(( ${budget%h} * 3600 ))") ;;
  *[!0-9]*|'') log "budget must be a number of executions or a time such as 300s, 10m, 1h"; exit 2 ;;
  *) limit=(-E "$budget") ;;
esac

# afl++ from Debian, and python3 for the report.
need_apt=()
command -v afl-fuzz >/dev/null 2>&1 || need_apt+=(afl++)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "installing ${need_apt[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# SharpFuzz's instrumenter, at the version the harness's SharpFuzz package matches.
if [ ! -x "$tools/sharpfuzz" ]; then
  log "installing SharpFuzz.CommandLine 2.3.0"
  dotnet tool install SharpFuzz.CommandLine --version 2.3.0 --tool-path "$tools" >/dev/null
fi

# A fresh publish each run: sharpfuzz rewrites the assemblies in place, and must not instrument them twice. IL only:
# sharpfuzz cannot instrument the ReadyToRun images a Release build of the host makes (build/Broker.ReadyToRun.targets).
log "publishing fuzz/Broker.Fuzz"
rm -rf "$out"
dotnet publish fuzz/Broker.Fuzz/Broker.Fuzz.csproj -c Release -p:BrokerReadyToRun=false -o "$out" -nologo -v quiet >/dev/null
for assembly in Broker.Abstractions Broker.Core Broker.JetStream Broker.Adapters.Mqtt Broker.Adapters.WebSocket Broker.Host; do
  "$tools/sharpfuzz" "$out/$assembly.dll" >/dev/null
done

targets=$(dotnet "$out/Broker.Fuzz.dll" list)
if [ "$target" != all ]; then
  grep -qx -- "$target" <<<"$targets" || { log "unknown target '$target'; targets: $(echo $targets)"; exit 2; }
  targets=$target
fi

# afl-fuzz checks meant for native binaries: the instrumented code is managed (run by dotnet), and containers
# often cannot change core_pattern or the CPU governor.
export AFL_SKIP_BIN_CHECK=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1

status=0
for name in $targets; do
  log "fuzzing $name (${limit[*]}) on core $cpu"
  rm -rf "${findings:?}/$name"
  mkdir -p "$findings/$name"
  started=$(date -u +%Y-%m-%dT%H:%MZ)
  taskset -c "$cpu" afl-fuzz -i "fuzz/corpus/$name" -o "$findings/$name" -t "$timeout_ms" -m none "${limit[@]}" \
    -- dotnet "$out/Broker.Fuzz.dll" "$name" >"$findings/$name.log" 2>&1 || {
      log "afl-fuzz failed for $name; see $findings/$name.log"; tail -20 "$findings/$name.log" >&2; status=1; continue; }

  # Crash and hang inputs become regression inputs (tests/Broker.Fuzz.Tests runs every file there).
  for kind in crashes hangs; do
    for file in "$findings/$name/default/$kind"/id:*; do
      [ -e "$file" ] || continue
      mkdir -p "fuzz/regressions/$name"
      cp "$file" "fuzz/regressions/$name/afl-${kind%es}-$(sha256sum "$file" | cut -c1-12)"
      status=1
    done
  done

  python3 - "$findings/$name/default/fuzzer_stats" "$name" "$started" "$command_line" docs/reliability.md <<'PY'
import re, sys
stats_file, name, started, command, doc = sys.argv[1:]
stats = dict(line.split(":", 1) for line in open(stats_file) if ":" in line)
stats = {k.strip(): v.strip() for k, v in stats.items()}
row = (f"| {name} | {int(stats['execs_done']):,} | {stats['corpus_count']} | {stats['saved_crashes']} | "
       f"{stats['saved_hangs']} | {float(stats['execs_per_sec']):,.0f} | {int(stats['run_time']) // 60} min {int(stats['run_time']) % 60} s | "
       f"{started} | `{command}` |")
header = ("| target | executions | paths (corpus) | crashes | hangs | exec/s | run time | date (UTC) | command |\n"
          "|---|---|---|---|---|---|---|---|---|\n")
try:
    text = open(doc).read()
except FileNotFoundError:
    text = "# Reliability\n"
start = text.find("\n## Fuzzing")
if start < 0:
    text = text.rstrip("\n") + "\n\n## Fuzzing\n\n" + header
    start = text.find("\n## Fuzzing")
end = text.find("\n## ", start + 1)
end = len(text) if end < 0 else end
section = text[start:end]
# Replace this target's row in the figures table (the one after the header), or add it.
lines = section.split("\n")
table = [i for i, l in enumerate(lines) if l.startswith("| target | executions")]
if not table:
    lines += ["", header.rstrip("\n")]
    table = [len(lines) - 2]
first = table[0] + 2
last = first
while last < len(lines) and lines[last].startswith("|"):
    last += 1
rows = [l for l in lines[first:last] if not l.startswith(f"| {name} |")] + [row]
order = ["nats", "mqtt", "websocket-frames", "websocket-upgrade", "monitoring-http", "conf", "jetstream-api"]
rows.sort(key=lambda l: order.index(l.split("|")[1].strip()) if l.split("|")[1].strip() in order else 99)
lines[first:last] = rows
text = text[:start] + "\n".join(lines) + text[end:]
open(doc, "w").write(text)
print(row)
PY
done

exit $status
