#!/usr/bin/env python3
"""What a burst of MQTT 3.1.1 sessions costs in resident memory, by part, without the harness.

  scripts/mqtt-sessions-probe.py HOST_DLL [SESSIONS] [QOS] [--parallel P] [--label L] [--assemblies] [--files] [--jit-list OUT] [--keep DIR] [--cpu]

Starts the host (`dotnet HOST_DLL`, NATS and MQTT on free 127.0.0.1 ports, JetStream on a fresh store directory: the
same arguments and environment as the comparison harness's "MQTT sessions" row), waits for its MQTT port, connects
one warm-up session with one subscription and closes it, waits 1 s and reads the baseline; then connects SESSIONS
(default 1,000) clean sessions `session-<i>` with one SUBSCRIBE each to `sessions/<i>` at QOS (0 or 1; default 0),
P at a time (default 100 for QoS 0, 10 for QoS 1, as the harness), reads again 2 s and 32 s after the last SUBACK,
closes them all and reads once more 30 s later. Each reading is /proc/PID/smaps split into anonymous memory, the
JIT's double-mapped code (`doublemapper`), and file pages (images, assemblies); the figures are per session above the
baseline, and "left" is the share of the baseline still above it after the leave. `--assemblies` lists the .dll files
mapped first during the burst and during the leave (/proc/PID/maps); `--files` the file pages grown
by +32 s, by file (16 KB and more); `--keep DIR` keeps the host's log and store.
With DOTNET_JitStdOutFile=FILE and DOTNET_JitDisasmSummary=1 in the environment, the JIT's method count is printed at
each reading, and the methods compiled from the baseline to +32 s by tier and by ours (Broker.*) or not; `--jit-list
OUT` saves those lines. `--cpu` prints the server's CPU (/proc/PID/stat, 10 ms ticks) from the baseline to the last
SUBACK and to +32 s. Memory figures are bytes and do not depend on the machine's load; the connect time does.
"""
import argparse, os, shutil, signal, socket, struct, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from nats_probe import free_port, process_cpu_seconds  # noqa: E402


def packet(header, body):
    length, encoded = len(body), bytearray()
    while True:
        b = length & 0x7F
        length >>= 7
        encoded.append(b | (0x80 if length else 0))
        if not length:
            break
    return bytes([header]) + bytes(encoded) + body


def read_packet(sock):
    def exactly(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("server closed the connection")
            data += chunk
        return data

    header = exactly(1)[0]
    length, shift = 0, 0
    while True:
        b = exactly(1)[0]
        length |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    return header, exactly(length)


def session(port, client_id, topic, qos):
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    cid = client_id.encode()
    sock.sendall(packet(0x10, b"\x00\x04MQTT\x04\x02\x00\x3c" + struct.pack(">H", len(cid)) + cid))
    header, body = read_packet(sock)
    if header != 0x20 or body[1] != 0:
        raise RuntimeError(f"CONNACK {header:#x} {body.hex()}")
    t = topic.encode()
    sock.sendall(packet(0x82, b"\x00\x01" + struct.pack(">H", len(t)) + t + bytes([qos])))
    while True:
        header, body = read_packet(sock)
        if header == 0x90:
            if body[2] != qos:
                raise RuntimeError(f"SUBACK granted {body[2]:#x} for QoS {qos}")
            return sock


def parts(pid, by_file=None):
    """Resident bytes by kind from /proc/PID/smaps: anonymous, JIT code (doublemapper), file-backed (and by file)."""
    anon = jit = files = 0
    name = ""
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            first = line.split(None, 1)[0]
            if not first.endswith(":"):
                fields = line.split(None, 5)
                name = fields[5].strip() if len(fields) > 5 else ""
            elif first == "Rss:":
                kb = int(line.split()[1])
                if "doublemapper" in name:
                    jit += kb
                elif name.startswith("/"):
                    files += kb
                    if by_file is not None:
                        key = name.rsplit("/", 1)[-1]
                        by_file[key] = by_file.get(key, 0) + kb * 1024
                else:
                    anon += kb
    return {"anon": anon * 1024, "jit": jit * 1024, "file": files * 1024}


def assemblies(pid):
    with open(f"/proc/{pid}/maps") as f:
        return {line.split()[-1].rsplit("/", 1)[-1] for line in f if line.rstrip().endswith(".dll")}


def jit_count():
    path = os.environ.get("DOTNET_JitStdOutFile")
    if not path or not os.path.exists(path):
        return None
    with open(path, errors="replace") as f:
        return sum(1 for line in f if "JIT compiled" in line)


def jit_summary(first, last, save=None):
    """The JIT's compilations from line FIRST to LAST of its listing, by tier and by ours (Broker.*) / the rest."""
    with open(os.environ["DOTNET_JitStdOutFile"], errors="replace") as f:
        lines = [line for line in f if "JIT compiled" in line][first:last]
    if save:
        with open(save, "w") as out:
            out.writelines(lines)
    tiers, code = {}, 0
    for line in lines:
        method = line.split("JIT compiled ", 1)[1]
        tier = method.rsplit(" [", 1)[1].split(",")[0]
        ours = "ours" if method.startswith("Broker.") or ".Broker." in method.split("(")[0] else "framework"
        tiers[(tier, ours)] = tiers.get((tier, ours), 0) + 1
        code += int(method.rsplit("code size=", 1)[1].split("]")[0]) if "code size=" in method else 0
    print(f"  JIT-compiled baseline..+32s: {len(lines)} methods, {code >> 10} KB of code;",
          ", ".join(f"{t} {o} {n}" for (t, o), n in sorted(tiers.items(), key=lambda kv: -kv[1])))


def start_host(dll, directory, store):
    """Starts `dotnet DLL` with NATS and MQTT on free 127.0.0.1 ports and JetStream in STORE, its log in DIRECTORY/host.log;
    returns the process and the MQTT port once that port accepts (exits when the host stops or 60 s pass)."""
    nats, mqtt = free_port(), free_port()
    env = dict(os.environ, BROKER_PLUGINS__MQTT__HOST="127.0.0.1", BROKER_PLUGINS__MQTT__PORT=str(mqtt))
    log = open(os.path.join(directory, "host.log"), "w")
    proc = subprocess.Popen(["dotnet", dll, "-a", "127.0.0.1", "-p", str(nats), "-js", "-sd", store],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    log.close()  # the host holds its own descriptor
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            sys.exit(f"host exited with {proc.returncode}; log in {directory}")
        try:
            socket.create_connection(("127.0.0.1", mqtt), timeout=1).close()
            return proc, mqtt
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                sys.exit("MQTT port never accepted")
            time.sleep(0.1)


def stop_host(proc, directory, keep):
    """Stops the host with SIGINT (SIGKILL after 15 s) and removes DIRECTORY unless KEEP."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
    if not keep:
        shutil.rmtree(directory, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dll")
    ap.add_argument("sessions", nargs="?", type=int, default=1000)
    ap.add_argument("qos", nargs="?", type=int, default=0, choices=(0, 1))
    ap.add_argument("--parallel", type=int)
    ap.add_argument("--label", default="")
    ap.add_argument("--assemblies", action="store_true")
    ap.add_argument("--files", action="store_true")
    ap.add_argument("--jit-list", help="with DOTNET_JitStdOutFile: save the burst's compilations (baseline..+32 s) here")
    ap.add_argument("--keep")
    ap.add_argument("--cpu", action="store_true", help="print the server's CPU during the connects and to +32 s")
    a = ap.parse_args()
    parallel = a.parallel or (100 if a.qos == 0 else 10)

    directory = a.keep or tempfile.mkdtemp(prefix="mqtt-probe-")
    os.makedirs(directory, exist_ok=True)
    proc, mqtt = start_host(a.dll, directory, os.path.join(directory, "js"))
    try:
        session(mqtt, "session-warm-up", "sessions/warm-up", a.qos).close()
        time.sleep(1)
        pid = proc.pid
        files0, files1 = {}, {}
        readings = [("base", parts(pid, files0), jit_count())]
        cpus = [process_cpu_seconds(pid) * 1000]
        before = assemblies(pid) if a.assemblies else set()

        socks, errors, lock, next_index = [None] * a.sessions, [], threading.Lock(), [0]

        def worker():
            while True:
                with lock:
                    i = next_index[0]
                    next_index[0] += 1
                if i >= a.sessions or errors:
                    return
                try:
                    socks[i] = session(mqtt, f"session-{i}", f"sessions/{i}", a.qos)
                except Exception as e:  # noqa: BLE001 - reported once below
                    errors.append(e)

        started = time.monotonic()
        threads = [threading.Thread(target=worker) for _ in range(parallel)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            sys.exit(f"connect failed: {errors[0]!r}")
        connect_seconds = time.monotonic() - started
        done = time.monotonic()
        cpus.append(process_cpu_seconds(pid) * 1000)
        time.sleep(2)
        readings.append(("+2s", parts(pid), jit_count()))
        time.sleep(max(0, done + 32 - time.monotonic()))
        readings.append(("+32s", parts(pid, files1), jit_count()))
        cpus.append(process_cpu_seconds(pid) * 1000)
        burst = assemblies(pid) if a.assemblies else set()
        for s in socks:
            s.close()
        time.sleep(30)
        readings.append(("left", parts(pid), jit_count()))
        after = assemblies(pid) if a.assemblies else set()

        base = readings[0][1]
        total0 = sum(base.values())
        load = os.getloadavg()[0]
        print(f"{a.label} sessions={a.sessions} qos={a.qos} connect={connect_seconds:.2f}s load={load:.1f} "
              f"base={total0 / 1048576:.1f}MB (anon {base['anon'] >> 10} KB, jit {base['jit'] >> 10}, file {base['file'] >> 10})")
        for name, r, jc in readings[1:]:
            d = {k: r[k] - base[k] for k in r}
            total = sum(d.values())
            jits = "" if jc is None else f" jit-methods {jc - readings[0][2]:+d}"
            if name == "left":
                print(f"  {name:>5}: {total / total0 * 100:6.2f}% above the baseline ({total / 1024:+.0f} KB: anon {d['anon'] / 1024:+.0f}, "
                      f"jit {d['jit'] / 1024:+.0f}, file {d['file'] / 1024:+.0f}){jits}")
            else:
                per = {k: v / a.sessions for k, v in d.items()}
                print(f"  {name:>5}: {total / a.sessions:7.0f} B/session (anon {per['anon']:.0f}, jit {per['jit']:.0f}, "
                      f"file {per['file']:.0f}){jits}")
        if a.cpu:
            t0, t1, t2 = cpus
            print(f"  cpu: baseline..last SUBACK {t1 - t0:.0f} ms ({(t1 - t0) * 1000 / a.sessions:.0f} us/session), "
                  f"baseline..+32s {t2 - t0:.0f} ms (the JIT's tier-1 work included)")
        if readings[0][2] is not None:
            jit_summary(readings[0][2], readings[2][2], a.jit_list)
        if a.files:
            grown = sorted(((files1.get(k, 0) - files0.get(k, 0), k) for k in files0.keys() | files1.keys()), reverse=True)
            print("  file pages grown by +32 s (KB):", ", ".join(f"{k} {d >> 10:+d}" for d, k in grown if abs(d) >= 16384))
        if a.assemblies:
            print("  first mapped during the burst:", " ".join(sorted(burst - before)) or "-")
            print("  first mapped during the leave:", " ".join(sorted(after - burst)) or "-")
    finally:
        stop_host(proc, directory, a.keep)


if __name__ == "__main__":
    main()
