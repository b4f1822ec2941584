#!/usr/bin/env python3
# Usage: sessions.py PORT N READYFILE -- opens N MQTT 3.1.1 sessions (clean, one QoS 0 SUBSCRIBE each), writes READYFILE, holds them until stdin closes.
import socket, sys, os, time
port, n, ready = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def rl(n):
    out = bytearray()
    while True:
        b = n & 0x7f; n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n: return bytes(out)
def s16(b): return len(b).to_bytes(2, 'big') + b
def recvn(s, k):
    buf = b''
    while len(buf) < k:
        c = s.recv(k - len(buf))
        if not c: raise EOFError
        buf += c
    return buf
socks = []
for i in range(n):
    s = socket.create_connection(('127.0.0.1', port))
    cid = b'walk-%d' % i
    var = s16(b'MQTT') + bytes([4, 2]) + (600).to_bytes(2, 'big')
    body = var + s16(cid)
    s.sendall(bytes([0x10]) + rl(len(body)) + body)
    assert recvn(s, 4)[0] == 0x20
    topic = b'walk/%d' % i
    body = (1).to_bytes(2, 'big') + s16(topic) + bytes([0])
    s.sendall(bytes([0x82]) + rl(len(body)) + body)
    assert recvn(s, 5)[0] == 0x90
    socks.append(s)
open(ready, 'w').write('ok')
sys.stdin.read()
