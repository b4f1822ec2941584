#!/usr/bin/env python3
"""How long a leave of MQTT QoS 1 sessions takes until the last JetStream consumer is gone, and what it costs.

  scripts/mqtt-leave-probe.py HOST_DLL [SESSIONS] [--parallel P] [--label L] [--strace OUT | --perf OUT] [--wait S] [--keep DIR]

Starts the host as scripts/mqtt-sessions-probe.py does (`dotnet HOST_DLL`, NATS and MQTT on free 127.0.0.1 ports,
JetStream on a fresh store directory), connects one warm-up session, then SESSIONS (default 10,000) clean sessions
`session-<i>` with one QoS 1 SUBSCRIBE each to `sessions/<i>`, P at a time (default 10, as the harness), waits 5 s,
closes them all (FIN) and counts the consumer folders left under the MQTT messages stream's `obs/` every 0.1 s until
none is left and no renamed folder of a deleted consumer (a dot name, removed after the delete's answer) either, or
S seconds (default 600). Prints the time to half and to the last consumer folder gone and to the files removed, the
host's CPU (utime + stime from /proc/PID/stat) to each, and the process's resident memory before and after.
`--strace OUT` attaches `strace -f -c` to the host for the leave (system call counts and times in OUT; strace slows
the host, so the leave's length is then not comparable; with STRACE_CALLS=unlink,rmdir,fsync in the environment,
those calls are listed one a line with their time, `strace -T -tt`); `--perf OUT` records `perf record -g` samples of the
leave instead (run with DOTNET_PerfMapEnabled=1 in the environment for the managed frames' names). The folder count does not depend on the machine's load; the
leave's length and CPU do (say the load average beside them: it is printed).
"""
import argparse, os, shutil, signal, socket, struct, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
probe = __import__("mqtt-sessions-probe")

from nats_probe import process_cpu_seconds  # noqa: E402  (scripts/lib, on the path once mqtt-sessions-probe is imported)


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def folders(obs):
    """Consumer folders under obs/, and the renamed folders of deleted consumers (dot names) not yet removed."""
    try:
        names = os.listdir(obs)
    except FileNotFoundError:
        return -1, 0
    renamed = sum(1 for n in names if n.startswith("."))
    return len(names) - renamed, renamed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dll")
    ap.add_argument("sessions", nargs="?", type=int, default=10000)
    ap.add_argument("--parallel", type=int, default=10)
    ap.add_argument("--label", default="")
    ap.add_argument("--strace")
    ap.add_argument("--perf")
    ap.add_argument("--wait", type=float, default=600)
    ap.add_argument("--keep")
    a = ap.parse_args()

    directory = a.keep or tempfile.mkdtemp(prefix="mqtt-leave-")
    os.makedirs(directory, exist_ok=True)
    store = os.path.join(directory, "js")
    proc, mqtt = probe.start_host(a.dll, directory, store)
    tracer = None
    try:
        probe.session(mqtt, "session-warm-up", "sessions/warm-up", 1).close()
        obs = os.path.join(store, "jetstream", "$G", "streams", "$MQTT_msgs", "obs")
        socks, errors, lock, next_index = [None] * a.sessions, [], threading.Lock(), [0]

        def worker():
            while True:
                with lock:
                    i = next_index[0]
                    next_index[0] += 1
                if i >= a.sessions or errors:
                    return
                try:
                    socks[i] = probe.session(mqtt, f"session-{i}", f"sessions/{i}", 1)
                except Exception as e:  # noqa: BLE001 - reported once below
                    errors.append(e)

        started = time.monotonic()
        threads = [threading.Thread(target=worker) for _ in range(a.parallel)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            sys.exit(f"connect failed: {errors[0]!r}")
        connect_seconds = time.monotonic() - started
        time.sleep(5)
        pid = proc.pid
        held = folders(obs)[0]
        rss_held = rss_kb(pid)
        if a.strace or a.perf:
            calls = os.environ.get("STRACE_CALLS")
            command = ((["strace", "-f", "-T", "-tt", "-e", "trace=" + calls] if calls else ["strace", "-f", "-c"])
                       + ["-o", a.strace, "-p", str(pid)] if a.strace
                       else ["perf", "record", "-F", "499", "-g", "-o", a.perf, "-p", str(pid)])
            tracer = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(2)
        cpu0 = process_cpu_seconds(pid)
        t0 = time.monotonic()
        for s in socks:
            s.close()
        closed = time.monotonic() - t0
        half = last = removed = cpu_last = None
        count, renamed, trail = held, 0, []
        while time.monotonic() - t0 < a.wait:
            count, renamed = folders(obs)
            now = time.monotonic() - t0
            if half is None and count <= held // 2:
                half = now
            if not trail or now - trail[-1][0] >= 5:
                trail.append((now, count, renamed))
            if count == 0 and last is None:
                last = now
                cpu_last = process_cpu_seconds(pid) - cpu0
            if count == 0 and renamed == 0:
                removed = now
                break
            time.sleep(0.1)
        cpu = process_cpu_seconds(pid) - cpu0
        rss_left = rss_kb(pid)
        if tracer:
            tracer.send_signal(signal.SIGINT)
            tracer.wait(30)
            tracer = None
        load = os.getloadavg()
        fmt = lambda v: "never" if v is None else f"{v:.1f}s"
        print(f"{a.label} sessions={a.sessions} connect={connect_seconds:.1f}s consumers held={held} closes sent in {closed:.2f}s "
              f"half gone {fmt(half)} last gone {fmt(last)} (left {count}) files removed {fmt(removed)} (left {renamed}) "
              f"CPU to the last gone {fmt(cpu_last)}, to the files removed {cpu:.1f}s "
              f"RSS held {rss_held >> 10} MB after {rss_left >> 10} MB load {load[0]:.1f}/{load[1]:.1f}")
        print("  consumer folders / renamed folders left by time:", ", ".join(f"{t:.0f}s {c}/{r}" for t, c, r in trail))
    finally:
        if tracer:
            tracer.kill()
        probe.stop_host(proc, directory, a.keep)


if __name__ == "__main__":
    main()
