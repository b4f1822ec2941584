#!/usr/bin/env python3
# Usage: diff.py BASE AFTER N -- per-session bytes by type (AFTER-BASE)/N, pooled arrays >=4KB left out of TOTAL.
import sys
def load(p):
    d = {}
    for l in open(p):
        t, c, b = l.rstrip('\n').split('\t'); d[t] = (int(c), int(b))
    return d
a, b, n = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3])
rows = []
for t in set(a) | set(b):
    c = (b.get(t, (0, 0))[0] - a.get(t, (0, 0))[0]) / n
    s = (b.get(t, (0, 0))[1] - a.get(t, (0, 0))[1]) / n
    if abs(s) >= 2: rows.append((s, c, t))
rows.sort(reverse=True)
tot = sum(s for s, c, t in rows if '(>=4KB)' not in t)
allt = sum((b[t][1] - a.get(t, (0, 0))[1]) / n for t in b if '(>=4KB)' not in t) - sum(a[t][1] / n for t in a if t not in b and '(>=4KB)' not in t)
print(f"TOTAL(no >=4KB) {allt:.0f}")
for s, c, t in rows: print(f"{s:8.1f} {c:6.2f} {t}")
