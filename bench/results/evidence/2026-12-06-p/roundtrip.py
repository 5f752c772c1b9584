#!/usr/bin/env python3
"""Keep-alive GETs to one agent over a raw socket, TCP_NODELAY, one prebuilt request, each answer read by its
Content-Length: the web server's round trip without a client library's own work. 500 warm-up requests, then N timed.
A connection the server closes is opened again (counted; the reopening is inside the timed request).
Usage: roundtrip.py PORT PATH N [BEARER_TOKEN]"""
import socket, sys, time
port, path, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
tok = sys.argv[4] if len(sys.argv) > 4 else None
def conn():
    global s
    s = socket.create_connection(("127.0.0.1", port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
conn()
reconnects = 0
def rd():
    d = s.recv(65536)
    if not d: raise EOFError
    return d
req = f"GET {path} HTTP/1.1\r\nHost: x\r\n" + (f"Authorization: Bearer {tok}\r\n" if tok else "") + "\r\n"
req = req.encode()
def one():
    global reconnects
    while True:
        try:
            return one_()
        except (EOFError, ConnectionError):
            reconnects += 1; conn()
def one_():
    s.sendall(req); buf = b""
    while b"\r\n\r\n" not in buf: buf += rd()
    head, body = buf.split(b"\r\n\r\n", 1)
    cl = None
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"): cl = int(line.split(b":")[1])
    if cl is None:  # chunked
        while not body.endswith(b"0\r\n\r\n"): body += rd()
    else:
        while len(body) < cl: body += rd()
    return head.split(b"\r\n")[0]
status = one()
for i in range(500): one()
ts = []
for i in range(n):
    t = time.perf_counter_ns(); one(); ts.append(time.perf_counter_ns() - t)
ts.sort()
print(f"{status.decode()} reconnects {reconnects} p50 {ts[n//2]/1e3:.1f} us p90 {ts[n*9//10]/1e3:.1f} p99 {ts[n*99//100]/1e3:.1f}")
