#!/bin/bash
# Usage: scripts/heap-walk/run.sh HOSTDIR LABEL [N]  -- live heap per idle MQTT 3.1.1 QoS 0 session by type (issue 25).
# Starts HOSTDIR/Broker.Host.dll with -js -sd, holds one warm-up session, walks the objects reachable from the GC roots
# (ClrMD, suspended), opens N (default 1,000) more sessions with one QoS 0 subscription each, walks again, and writes
# the difference per session by type to $OUT/LABEL.diff (OUT defaults to /tmp/heap-walk). FIELDS="Type.Full.Name ..."
# also prints those types' field layouts ($OUT/LABEL/fields.txt). Pooled arrays of 4 KB and more are left out of TOTAL.
# Compare builds of one kind (composite against composite): a runtime type's size can differ between them.
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/heap-walk}
H=$1; L=$2; N=${3:-1000}; D=$OUT/$L; rm -rf "$D"; mkdir -p "$D"
WALK=$OUT/bin/walk
if [ ! -x "$WALK" ]; then
  # Built outside the repository: its Directory.Build.props and central package versions are not for this tool.
  mkdir -p "$OUT/src" && cp "$HERE"/*.cs "$HERE/walk.csproj" "$OUT/src/"
  dotnet build "$OUT/src/walk.csproj" -c Release -o "$OUT/bin" -nologo -v quiet >&2
fi
ulimit -n 20000
NP=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
MP=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
BROKER_PLUGINS__MQTT__HOST=127.0.0.1 BROKER_PLUGINS__MQTT__PORT=$MP dotnet "$H/Broker.Host.dll" -a 127.0.0.1 -p "$NP" -js -sd "$D/js" > "$D/host.log" 2>&1 &
HP=$!
for i in $(seq 100); do python3 -c "import socket;socket.create_connection(('127.0.0.1',$MP))" 2>/dev/null && break; sleep 0.2; done
mkfifo "$D/w1" "$D/w2"
python3 "$HERE/sessions.py" "$MP" 1 "$D/r1" < "$D/w1" & C1=$!
exec 7>"$D/w1"
while [ ! -f "$D/r1" ]; do sleep 0.2; done
sleep 3
"$WALK" $HP "$D/base.tsv"
python3 "$HERE/sessions.py" "$MP" "$N" "$D/r2" < "$D/w2" & C2=$!
exec 8>"$D/w2"
while [ ! -f "$D/r2" ]; do sleep 0.5; done
sleep 5
"$WALK" $HP "$D/after.tsv"
[ -n "$FIELDS" ] && "$WALK" $HP --fields $FIELDS > "$D/fields.txt"
exec 7>&- 8>&-
wait $C1 $C2 || true
kill $HP; wait $HP || true
python3 "$HERE/diff.py" "$D/base.tsv" "$D/after.tsv" "$N" > "$OUT/$L.diff"
head -40 "$OUT/$L.diff"
