#!/bin/bash
# Usage: scripts/ws-pubsub-stall/run.sh HOST_DLL|nats-server [ROUNDS] [COUNT] [ws|tls]
# The ws-pubsub-128.core row's pattern outside the harness (docs/benchmarks.md, "late-afternoon round" of 2026-11-29):
# starts the server with a clear-text WebSocket listener and monitoring on free ports, then ROUNDS (default 10) rounds
# of COUNT (default 1,600,000) x 128 B from a NATS.Client.Core publisher to a NATS.Client.Core subscriber over ws://.
# With `tls` (section "tlsstall"), the same over tls:// instead: the client listener gets a `tls { }` block with a
# self-signed certificate made here (the clients skip its verification).
# Exit 2 on a stall (the counts, /connz and the sockets printed), then the server's slow-consumer lines.
set -e
here=$(cd "$(dirname "$0")" && pwd)
free() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
nats=$(free); http=$(free); ws=$(free)
conf=$(mktemp --suffix=.conf); log=$(mktemp --suffix=.log)
printf 'listen: 127.0.0.1:%s\nhttp: 127.0.0.1:%s\nwebsocket { listen: "127.0.0.1:%s", no_tls: true }\n' "$nats" "$http" "$ws" > "$conf"
url="ws://127.0.0.1:$ws"
if [ "${4:-ws}" = tls ]; then
  cert=$(mktemp --suffix=.pem); key=$(mktemp --suffix=.key)
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout "$key" -out "$cert" 2> /dev/null
  printf 'tls { cert_file: "%s", key_file: "%s" }\n' "$cert" "$key" >> "$conf"
  url="tls://127.0.0.1:$nats"
fi
dotnet build "$here/stall.csproj" -c Release -o "$here/bin/out" -v q -nologo > /dev/null
if [ "$1" = nats-server ]; then nats-server -c "$conf" > "$log" 2>&1 & else dotnet "$1" -c "$conf" > "$log" 2>&1 & fi
server=$!
trap 'kill $server 2>/dev/null; rm -f "$conf" "${cert:-}" "${key:-}"' EXIT
for _ in $(seq 100); do curl -s "http://127.0.0.1:$http/varz" > /dev/null && break; sleep 0.1; done
status=0
dotnet "$here/bin/out/stall.dll" "$url" "http://127.0.0.1:$http" "${3:-1600000}" "${2:-10}" || status=$?
grep -i "slow consumer" "$log" || true
exit $status
