#!/bin/bash
# usage: scripts/tls-record-probe/run.sh ours:HOSTDIR|nats RECORDS MSGS_PER_RECORD [plain]   (CONFFILE=tls.conf with cert_file/key_file unless plain; PERF=1 records perf to /tmp/tlspub-perf2.data)
SRV=$1
PORT=$(PYTHONPATH="$(dirname "$0")/../lib" python3 -c 'from nats_probe import free_port; print(free_port())')
if [ "$4" = plain ]; then CONF=""; else CONF="-c ${CONFFILE:?set CONFFILE to a TLS config}"; fi
if [ "$SRV" = nats ]; then nats-server -a 127.0.0.1 -p $PORT $CONF > /tmp/tlspub-srv2.log 2>&1 &
else DOTNET_PerfMapEnabled=${PERF:-0} DOTNET_EnableWriteXorExecute=0 dotnet ${SRV#ours:}/Broker.Host.dll -a 127.0.0.1 -p $PORT $CONF > /tmp/tlspub-srv2.log 2>&1 & fi
SPID=$!
for i in $(seq 50); do (echo > /dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done
echo -n "$SRV: "; timeout 120 python3 $(dirname $0)/probe.py $PORT $SPID $2 $3 $4
kill $SPID; wait $SPID 2>/dev/null
