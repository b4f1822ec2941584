#!/bin/bash
# Usage: scripts/typeload-trace/run.sh HOST_DLL STORE_DIR [MESSAGES]
# One restart (scripts/restart-probe.py run) under EventPipe (Loader, JIT, TypeDiagnostic, CompilationDiagnostic), then
# per thread: type loads (TypeLoadStart/Stop: one per type handle the runtime builds), first calls into precompiled code
# (R2RGetEntryPoint), JIT-compiled methods, assemblies; and the start-up thread's counts per phase, a phase starting at
# the first call of one of our methods (Program.cs, Phases). Tracing inflates the times ~1.5-2x, not the counts.
# DUMP=TID:FROM_MS:TO_MS in the environment also lists the type names that thread loaded in that window (stderr).
# docs/benchmarks.md, "start9". Needs TraceEvent 3.1.21 in the NuGet cache (restored once).
set -e
here=$(cd "$(dirname "$0")" && pwd)
trace=$(mktemp --suffix=.nettrace)
dotnet build "$here/trace.csproj" -c Release -o "$here/bin/out" -v q -nologo > /dev/null
DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath="$trace" \
  DOTNET_EventPipeConfig='Microsoft-Windows-DotNETRuntime:0xA000000018:5' \
  python3 "$here/../restart-probe.py" run "$1" "$2" ${3:-20000}
dotnet "$here/bin/out/trace.dll" "$trace"
rm -f "$trace"
