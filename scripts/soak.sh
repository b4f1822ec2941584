#!/usr/bin/env bash
# The soak of issue 14 on a fresh machine: 10,000 NATS connections and 10,000 MQTT sessions churning for ten minutes
# around steady subscribers, against our host and nats-server 2.9.10 (installed with apt-get when missing, as
# scripts/test.sh does). Builds first; writes the ## Soak section of docs/reliability.md. Extra arguments go to the
# soak (e.g. --minutes 3 --nats 2000 --mqtt 2000). Exit code 1 when a message was lost or a connect failed.
# Accounts mode (issue 20): --accounts runs both servers on two accounts with a stream import between them (E exports
# soak.>, I imports it with the prefix imp.; half the steady and churned NATS clients subscribe from I, so the checked
# traffic crosses the import and the churn adds and removes import subscriptions; it writes its own section), e.g.
#   scripts/soak.sh --accounts --minutes 3 --nats 2000 --mqtt 1000 --churn 100 --no-write
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[soak.sh] %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    log "need root to run: $*"; return 1; fi
}

if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
  log "installing nats-server"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq nats-server >/dev/null
fi

# 20,000 clients: one descriptor each in the load generator and in the server (which inherits this limit).
want=$((2 * 20000 + 1024))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$want" ]; then
  ulimit -n "$want" 2>/dev/null || log "could not raise the open-file limit to $want (the harness tries again itself)"
fi

log "building"
dotnet build bench/Broker.Compare/Broker.Compare.csproj -c Release -nologo -v quiet

log "soaking (about 25 minutes: ten of churn per server, plus connecting and settling)"
exec dotnet run -c Release --no-build --project bench/Broker.Compare -- soak "$@"
