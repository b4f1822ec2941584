#!/usr/bin/env bash
# Usage: scripts/stall-release.sh [ITERATIONS] [tcp|tls|ws ...]   (default 300, all three)
# The stress of StalledPublisherCheck (docs/benchmarks.md, "stallrelease"): publishers stalled on a subscriber that
# stopped reading must answer a PING within 2 s once it is closed (slow-consumer rule, reset, half-close), ITERATIONS
# subscribers per test, 1 and 3 publishers, on the in-process broker of this checkout. Prints each test's figures.
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-300}
shift || true
transports=("${@:-tcp tls ws}")
ulimit -n 20000
for transport in ${transports[@]}; do
    case $transport in
        tcp) project=tests/Broker.Protocol.Tests ;;
        tls) project=tests/Broker.Tls.Tests ;;
        ws) project=tests/Broker.WebSocket.Tests ;;
        *) echo "unknown transport $transport" >&2; exit 2 ;;
    esac
    STALL_RELEASE_ITERATIONS=$iterations nice dotnet test "$project" -c Release -p:BrokerReadyToRunComposite=false \
        --filter "FullyQualifiedName~StalledPublisherTests" --logger "console;verbosity=detailed" 2>&1 \
        | grep -E "^\s+(Passed|Failed) |publisher\(s\)|iteration [0-9]|Total tests" || true
done
