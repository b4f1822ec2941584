#!/usr/bin/env python3
"""A restart's CPU, split by thread: what the js-file-restart row times, without the harness.

  scripts/restart-probe.py fill HOST_DLL STORE_DIR [MESSAGES] [SIZE]
      starts the host with JetStream on STORE_DIR, creates file stream R (subjects R.>) and publishes MESSAGES
      (default 20,000) of SIZE bytes (default 1,024) with acks, then stops it with SIGINT (a clean stop).
  scripts/restart-probe.py run HOST_DLL STORE_DIR|- [MESSAGES] [extra host arguments...]
      starts the host (with -js -sd STORE_DIR, or without JetStream for "-") and prints the process CPU (all threads,
      /proc/<pid>/task/*/schedstat) and the wall time since launch at "Broker is ready" in its log and, with a store,
      when a STREAM.INFO of R first reports MESSAGES messages (the harness's end point), with the process's anonymous
      memory (/proc/<pid>/smaps_rollup) then and the stream's own "recovered ... in" time from the log, then each
      thread's CPU by name (the start-up thread is "dotnet"; JetStream's JSON warm-up and the API loop run on ".NET TP Worker").

The stream's size does not change the figures (docs/benchmarks.md, "restart: where the 1 GB restart's time goes");
CPU is the measure on a loaded machine, wall is the load's. Set DOTNET_JitStdOutFile and DOTNET_JitDisasmSummary=1 in
the environment to list the JIT's compilations as well (docs/benchmarks.md, "restart2").
"""
import collections, json, os, signal, socket, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from nats_probe import free_port  # noqa: E402


def start(dll, store, extra):
    port = free_port()
    log_path = tempfile.mktemp(suffix=".log")
    args = ["dotnet", dll, "-a", "127.0.0.1", "-p", str(port)] + (["-js", "-sd", store] if store != "-" else []) + extra
    with open(log_path, "w") as log:
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    return proc, port, log_path, time.monotonic_ns()


def threads(pid):
    by_name = collections.Counter()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                by_name[name] += int(f.read().split()[0]) // 1_000_000
        except (OSError, ValueError):
            pass
    return by_name


def anonymous_kb(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("Anonymous:"))


def wait_ready(proc, log_path, t0):
    while True:
        with open(log_path) as f:
            if "Broker is ready" in f.read():
                return sum(threads(proc.pid).values()), (time.monotonic_ns() - t0) // 1_000_000
        if proc.poll() is not None:
            with open(log_path) as f:
                sys.exit(f.read())
        time.sleep(0.001)


def request(conn, reader, subject, payload=b""):
    conn.sendall(b"PUB %s _r %d\r\n%s\r\n" % (subject.encode(), len(payload), payload))
    while True:
        line = reader.readline()
        if line.startswith((b"MSG", b"HMSG")):
            body = reader.read(int(line.split()[-1]) + 2)[:-2]
            return line.startswith(b"HMSG"), body


def connect(port):
    conn = socket.create_connection(("127.0.0.1", port), timeout=10)
    reader = conn.makefile("rb")
    reader.readline()
    conn.sendall(b'CONNECT {"verbose":false,"headers":true,"no_responders":true}\r\nSUB _r 1\r\n')
    return conn, reader


def fill(dll, store, messages, size):
    proc, port, log_path, t0 = start(dll, store, [])
    wait_ready(proc, log_path, t0)
    conn, reader = connect(port)
    config = json.dumps({"name": "R", "subjects": ["R.>"], "storage": "file"}).encode()
    print(request(conn, reader, "$JS.API.STREAM.CREATE.R", config)[1][:120])
    payload = b"x" * size
    for first in range(0, messages, 1000):
        batch = min(1000, messages - first)
        conn.sendall(b"".join(b"PUB R.a _r %d\r\n%s\r\n" % (size, payload) for _ in range(batch)))
        for _ in range(batch):
            line = reader.readline()
            reader.read(int(line.split()[-1]) + 2)
    conn.close()
    proc.send_signal(signal.SIGINT)
    proc.wait()


def run(dll, store, messages, extra):
    proc, port, log_path, t0 = start(dll, store, extra)
    try:
        ready_cpu, ready_wall = wait_ready(proc, log_path, t0)
        line = f"ready: process CPU {ready_cpu} ms, wall {ready_wall} ms"
        if store != "-":
            conn, reader = connect(port)
            while True:
                headers_only, body = request(conn, reader, "$JS.API.STREAM.INFO.R")
                if not headers_only and json.loads(body).get("state", {}).get("messages") == messages:
                    break
                time.sleep(0.001)
            info_cpu = sum(threads(proc.pid).values())
            line += f"; STREAM.INFO shows all: process CPU {info_cpu} ms, wall {(time.monotonic_ns() - t0) // 1_000_000} ms"
            line += f", Anonymous {anonymous_kb(proc.pid):,} KB"
            with open(log_path) as f:
                recovered = [l.split(" in ")[-1].strip() for l in f if " recovered: " in l]
            if recovered:
                line += f", recovery {', '.join(recovered)}"
            conn.close()
        print(line)
        print("  threads (CPU ms): " + ", ".join(f"{name} {ms}" for name, ms in threads(proc.pid).most_common() if ms > 0))
    finally:
        proc.terminate()
        proc.wait()


if len(sys.argv) < 4 or sys.argv[1] not in ("fill", "run"):
    sys.exit(__doc__)
if sys.argv[1] == "fill":
    fill(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 20000, int(sys.argv[5]) if len(sys.argv) > 5 else 1024)
else:
    run(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 20000, sys.argv[5:])
