# usage: python3 scripts/tls-record-probe/probe.py PORT SERVERPID RECORDS MSGS_PER_RECORD [plain]   (run.sh starts the server)
# (utime+stime from /proc) per record and per message over the measured part (after a warm-up of the same size).
import socket, ssl, sys, time, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from nats_probe import process_cpu_seconds  # noqa: E402
port, spid, records, k = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
plain = len(sys.argv) > 5 and sys.argv[5] == 'plain'
def cpu():
    return process_cpu_seconds(spid)
s = socket.create_connection(('127.0.0.1', port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
info = b''
while not info.endswith(b'\r\n'): info += s.recv(4096)
if not plain:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
    s = ctx.wrap_socket(s)
s.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\nPING\r\n')
buf = b''
while b'PONG' not in buf: buf += s.recv(4096)
rec = (b'PUB bench 128\r\n' + b'x' * 128 + b'\r\n') * k
def burst(n):
    for _ in range(n): s.sendall(rec)
    s.sendall(b'PING\r\n'); b = b''
    while b'PONG' not in b: b += s.recv(4096)
burst(records)
import subprocess, signal
perf = subprocess.Popen(['perf','record','-F','2999','-g','-p',str(spid),'-o','/tmp/tlspub-perf2.data'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) if os.environ.get('PERF') else None
if perf: time.sleep(0.5)
c0 = cpu(); t0 = time.time(); burst(records); c1 = cpu(); t1 = time.time()
if perf: perf.send_signal(signal.SIGINT); perf.wait()
ns = (c1 - c0) * 1e9
print(f'k={k} records={records}: server cpu {(c1-c0)*1000:.0f} ms, {ns/records:.0f} ns/record, {ns/records/k:.0f} ns/msg, {records*k/(t1-t0)/1e6:.2f} M msgs/s')
