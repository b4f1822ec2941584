#!/usr/bin/env python3
"""Where a fresh server's first run goes, by method, including the precompiled (ReadyToRun) code of the composite image.

  scripts/first-run-perf.py map HOST_DIR
      recompiles the composite image of a Release build of this checkout (the crossgen2 response file the build left
      in host/Broker.Host/obj/) with --perfmap, into HOST_DIR.map/: a copy of HOST_DIR whose framework-r2r.dll has the
      same code plus framework-r2r.ni.{composite}.map, the method of every precompiled code range (about a minute).
      HOST_DIR must be that build's output (a copy of host/Broker.Host/bin/Release/net10.0).
  scripts/first-run-perf.py run HOST_DIR.map [TOP]
      starts that host under `perf record` (from launch, so nothing is missed), waits for its first PONG, publishes
      50,000 x 16 B with the harness's C program (libnats) as the harness's first run does, and prints the samples of
      that run only: by kind (our precompiled code, the framework's, JIT-compiled code, stubs, the runtime, the JIT,
      the kernel), by thread, and the TOP (default 30) methods or symbols.

perf cannot name code in framework-r2r.dll (a PE image mapped by the runtime); the map from crossgen2 can: a sample's
address in the mapping, plus the mapping's file offset, plus the .text section's RVA minus its file offset, is the
method's RVA. JIT-compiled code and stubs are named by the runtime's /tmp/perf-PID.map (DOTNET_PerfMapEnabled=1).
Counts are samples at 15 kHz (perf slows the start; the run itself is 10-20 ms). docs/benchmarks.md, "aggr1".
"""

import bisect
import collections
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from nats_probe import answers_ping, free_port  # noqa: E402
COMPOSITE = "framework-r2r.dll"
MAP = "framework-r2r.ni.{composite}.map"


def make_map(host_dir):
    rsp = os.path.join(ROOT, "host/Broker.Host/obj/Release/net10.0/R2RComposite.rsp")
    packages = os.path.expanduser("~/.nuget/packages/microsoft.netcore.app.crossgen2.linux-x64")
    crossgen = os.path.join(packages, sorted(os.listdir(packages))[-1], "tools/crossgen2")
    out = host_dir.rstrip("/") + ".map"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(host_dir, out)
    work = tempfile.mkdtemp()
    lines = [line for line in open(rsp).read().splitlines() if not line.startswith("--out:")]
    lines += [f"--out:{work}/{COMPOSITE}", "--perfmap", f"--perfmap-path:{work}"]
    with open(f"{work}/rsp", "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run([crossgen, f"@{work}/rsp"], check=True, stdout=subprocess.DEVNULL)
    for name in os.listdir(work):
        if name.endswith(".dll") or name.endswith(".map"):
            shutil.copy(os.path.join(work, name), out)
    shutil.rmtree(work)
    print(f"{out}/{MAP}")


def text_delta(dll):
    """The .text section's RVA minus its file offset."""
    with open(dll, "rb") as f:
        data = f.read(4096)
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    sections, optional = struct.unpack_from("<H", data, pe + 6)[0], struct.unpack_from("<H", data, pe + 20)[0]
    for i in range(sections):
        name, _, rva, _, raw = struct.unpack_from("<8sIIII", data, pe + 24 + optional + 40 * i)
        if name.rstrip(b"\0") == b".text":
            return rva - raw
    raise SystemExit("no .text section")


def wait_for_pong(port, deadline):
    while time.monotonic() < deadline:
        if answers_ping(port):
            return
        time.sleep(0.005)
    raise SystemExit("no PONG within 30 s")


def run(host_dir, top):
    work = tempfile.mkdtemp()
    bench = f"{work}/natsbench"
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libnats"], capture_output=True, text=True, check=True).stdout.split()
    subprocess.run(["gcc", "-O2", "-o", bench, os.path.join(ROOT, "bench/Broker.Compare/Load/C/natsbench.c")] + flags, check=True)
    port = free_port()
    env = dict(os.environ, DOTNET_PerfMapEnabled="1", DOTNET_EnableWriteXorExecute="0")
    perf = subprocess.Popen(
        ["perf", "record", "-k", "realtime", "-F", "15000", "-g", "-o", f"{work}/perf.data", "--",
         "dotnet", os.path.join(host_dir, "Broker.Host.dll"), "-a", "127.0.0.1", "-p", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_pong(port, time.monotonic() + 30)
        t0 = time.time()
        subprocess.run([bench, "pubsub", f"nats://127.0.0.1:{port}", "bench.first", "16", "50000", "1", "0"], check=True, stdout=subprocess.DEVNULL)
        t1 = time.time()
        time.sleep(0.3)
    finally:
        host = subprocess.run(["pgrep", "-P", str(perf.pid)], capture_output=True, text=True).stdout.split()
        for pid in host:
            os.kill(int(pid), 15)
        perf.wait()
    report(f"{work}/perf.data", t0, t1, os.path.join(host_dir, MAP), text_delta(os.path.join(host_dir, COMPOSITE)), top)
    shutil.rmtree(work)


def report(data, t0, t1, map_path, delta, top):
    entries = []
    for line in open(map_path):
        parts = line.rstrip("\n").split(" ", 2)
        if len(parts) == 3 and int(parts[0], 16) < 0xF0000000:
            entries.append((int(parts[0], 16), int(parts[1], 16), parts[2]))
    entries.sort()
    starts = [e[0] for e in entries]
    script = subprocess.run(["perf", "script", "-i", data, "--show-mmap-events", "-G", "-F", "comm,tid,time,ip,sym,dso"],
                            capture_output=True, text=True).stdout.splitlines()
    base = None
    kinds, threads, symbols, total = collections.Counter(), collections.Counter(), collections.Counter(), 0
    for line in script:
        if "PERF_RECORD_MMAP2" in line and COMPOSITE in line and "r-xp" in line:
            m = re.search(r"\[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+|0)", line)
            base = (int(m.group(1), 16), int(m.group(3), 16))
            continue
        m = re.match(r"\s*(.+?)\s+(\d+)\s+(\d+\.\d+):\s+([0-9a-f]+)\s+(.*)\((.*)\)\s*$", line)
        if "PERF_RECORD" in line or not m or not t0 <= float(m.group(3)) <= t1:
            continue
        comm, _, _, ip, sym, dso = m.groups()
        total += 1
        sym = sym.strip()
        if COMPOSITE in dso and base:
            rva = int(ip, 16) - base[0] + base[1] + delta
            i = bisect.bisect_right(starts, rva) - 1
            name = entries[i][2] if i >= 0 and rva < entries[i][0] + entries[i][1] + 16 else f"? {rva:x}"
            owner = re.search(r"(\S+)::", name)
            kind = "precompiled, ours" if owner and owner.group(1).startswith("Broker.") else "precompiled, framework"
            sym = "R2R " + re.sub(r"^\S+ ", "", name)
        elif dso.startswith("/tmp/perf-"):
            kind = "stubs" if sym.startswith("stub") else "JIT-compiled"
            sym = "JIT " + sym
        elif "kernel" in dso:
            kind = "kernel"
        else:
            kind = os.path.basename(dso)
        kinds[kind] += 1
        threads[comm.strip()] += 1
        symbols[sym[:160]] += 1
    print(f"samples in the first run: {total}")
    for kind, n in kinds.most_common():
        print(f"  {kind:24} {n:5} {100 * n / max(total, 1):5.1f}%")
    print("by thread: " + ", ".join(f"{t} {n}" for t, n in threads.most_common()))
    for sym, n in symbols.most_common(top):
        print(f"  {n:5} {sym}")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "map":
        make_map(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 30)
    else:
        sys.exit(__doc__)
