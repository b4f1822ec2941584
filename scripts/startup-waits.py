#!/usr/bin/env python3
"""Where a start's wall time goes, per thread: CPU, waiting for a core, or blocked.

Starts our host (a build's Broker.Host.dll, as the comparison harness starts it), reads every thread's
/proc/<pid>/task/<tid>/schedstat (nanoseconds on a CPU, nanoseconds runnable but waiting for one) about every
millisecond, and prints it at the first log line, at "Broker is ready" and at the first PONG of a CONNECT + PING.
The start-up thread's wall time minus its CPU and its run-queue wait is what it spent blocked (disk, locks, sleeps):
on a loaded machine the run-queue wait is the load's, and what a start can shorten is its CPU.
Usage: scripts/startup-waits.py [HOST_DLL] [extra host arguments...]  (docs/benchmarks.md, "startup: the first
second and restart")
"""
import os, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from nats_probe import answers_ping, free_port  # noqa: E402

dll = sys.argv[1] if len(sys.argv) > 1 else "host/Broker.Host/bin/Release/net10.0/Broker.Host.dll"
port = free_port()
log_path = tempfile.mktemp(suffix=".log")
t0 = time.monotonic_ns()
with open(log_path, "w") as log:
    proc = subprocess.Popen(["dotnet", dll, "-a", "127.0.0.1", "-p", str(port)] + sys.argv[2:], stdout=log, stderr=subprocess.STDOUT)
pid = proc.pid


def snapshot():
    threads = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return threads
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                cpu, wait, _ = map(int, f.read().split())
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            threads[int(tid)] = (name, cpu, wait)
        except (OSError, ValueError):
            pass
    return threads


marks = []
try:
    while time.monotonic_ns() - t0 < 30e9 and proc.poll() is None:
        with open(log_path) as f:
            text = f.read()
        if not marks and "[INF]" in text:
            marks.append(("first log line", time.monotonic_ns() - t0, snapshot()))
        if len(marks) == 1 and "Broker is ready" in text:
            marks.append(("Broker is ready", time.monotonic_ns() - t0, snapshot()))
        if len(marks) == 2 and answers_ping(port):
            marks.append(("first PONG", time.monotonic_ns() - t0, snapshot()))
            break
        time.sleep(0.001)
finally:
    proc.terminate()
    proc.wait()
    os.unlink(log_path)

for label, wall, threads in marks:
    cpu = sum(t[1] for t in threads.values())
    wait = sum(t[2] for t in threads.values())
    print(f"{label}: wall {wall / 1e6:.0f} ms; all threads: CPU {cpu / 1e6:.0f} ms, run-queue wait {wait / 1e6:.0f} ms")
    if pid in threads:
        _, main_cpu, main_wait = threads[pid]
        print(f"  start-up thread: CPU {main_cpu / 1e6:.0f} ms, run-queue wait {main_wait / 1e6:.0f} ms, "
              f"blocked or not yet started {(wall - main_cpu - main_wait) / 1e6:.0f} ms")
    for tid, (name, tcpu, twait) in sorted(threads.items(), key=lambda kv: -kv[1][1])[:6]:
        if tid != pid:
            print(f"  {name:<16} CPU {tcpu / 1e6:6.1f} ms, run-queue wait {twait / 1e6:6.1f} ms")
