# Shared by scripts/first-run-tiers.sh and scripts/first-run-threads.sh (sourced from the repository root): their
# "[N] [HOST_DLL...]" arguments, a scratch folder removed on exit, the harness's C program (libnats) built in it, and
# scripts/lib/first-pong.sh's helpers.
# shellcheck source=scripts/lib/first-pong.sh
. scripts/lib/first-pong.sh

# first_run_setup DEFAULT_N "$@": sets runs (N, else DEFAULT_N), hosts (the HOST_DLLs, else this checkout's Release
# build; each must exist) and work (the scratch folder), and builds "$work/natsbench".
first_run_setup() {
  local default=$1 dll
  shift
  runs=${1:-$default}
  shift || true
  hosts=("$@")
  [ ${#hosts[@]} -gt 0 ] || hosts=(host/Broker.Host/bin/Release/net10.0/Broker.Host.dll)
  for dll in "${hosts[@]}"; do [ -f "$dll" ] || { echo "no $dll" >&2; exit 1; }; done
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # shellcheck disable=SC2046
  gcc -O2 -o "$work/natsbench" bench/Broker.Compare/Load/C/natsbench.c $(pkg-config --cflags --libs libnats)
}
