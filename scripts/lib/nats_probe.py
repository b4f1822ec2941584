"""Shared by the Python probes under scripts/ (first-run-perf.py, startup-waits.py, restart-probe.py,
mqtt-sessions-probe.py, mqtt-leave-probe.py, tls-record-probe/probe.py): a free port, whether a server under test
answers a CONNECT + PING, and a process's CPU time. Import with scripts/lib on sys.path (each probe adds it)."""

import os
import socket


def free_port():
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers_ping(port, timeout=5):
    """One attempt: connects to 127.0.0.1:port, sends CONNECT + PING, True once PONG arrives (False when refused or closed)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b'CONNECT {"verbose":false}\r\nPING\r\n')
            seen = b""
            while b"PONG" not in seen:
                chunk = s.recv(4096)
                if not chunk:
                    return False
                seen += chunk
            return True
    except OSError:
        return False


def process_cpu_seconds(pid):
    """The process's CPU time in seconds: /proc/PID/stat user + system (threads that ended included)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
