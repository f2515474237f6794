#!/usr/bin/env python3
"""Misbehaving clients of smd's control socket (smd/control.h).

Each case prints PASS or FAIL; the exit status is the number of failures.
smd must answer bad requests with an "ERROR: ..." line and keep serving
everybody else: the caller checks that smctl still works afterwards.
"""
import select
import socket
import sys
import time

path = sys.argv[1]
fails = 0


def result(ok, what):
    global fails
    print(("PASS: " if ok else "FAIL: ") + what)
    if not ok:
        fails += 1


class Conn:
    def __init__(self):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(20)
        # A full listen backlog says EAGAIN: smd accepts within a loop turn
        for _ in range(200):
            try:
                self.s.connect(path)
                break
            except BlockingIOError:
                time.sleep(0.05)
        else:
            self.s.connect(path)
        self.buf = b""

    def answer(self):
        """One answer: lines up to "OK" or "ERROR: ..."; None on EOF first."""
        while True:
            lines = self.buf.split(b"\n")
            for i, ln in enumerate(lines[:-1]):
                if ln == b"OK" or ln.startswith(b"ERROR: "):
                    self.buf = b"\n".join(lines[i + 1:])
                    return b"\n".join(lines[:i + 1]).decode()
            try:
                d = self.s.recv(65536)
            except ConnectionResetError:
                d = b""
            if not d:
                return None
            self.buf += d


def ask(req):
    c = Conn()
    c.s.sendall(req)
    a = c.answer()
    c.s.close()
    return a


a = ask(b"bogus\n")
result(a is not None and a.startswith("ERROR: unknown command 'bogus'"),
       "unknown command: %r" % a)
a = ask(b"status extra\n")
result(a is not None and a.startswith("ERROR: status takes no arguments"),
       "status with an argument: %r" % a)
a = ask(b"resweep --now\n")
result(a is not None and a.startswith("ERROR: resweep: unknown argument"),
       "resweep with a bad option: %r" % a)
a = ask(b"\n")
result(a is not None and a.startswith("ERROR: empty request"), "empty line: %r" % a)
a = ask(b"sta\x00tus\xff\x01\n")
result(a is not None and a.startswith("ERROR: the request is not a line of text"),
       "binary garbage: %r" % a)
a = ask(b" ".join([b"x"] * 50) + b"\n")
result(a is not None and a.startswith("ERROR:"), "50 words: %r" % a)

# 100 kB without a newline: an error, then smd hangs up (no next line to find)
c = Conn()
try:
    c.s.sendall(b"A" * 100000)
except (BrokenPipeError, ConnectionResetError):
    pass
a = c.answer()
result(a is not None and a.startswith("ERROR: request too long"), "oversized request: %r" % a)
try:
    eof = c.buf == b"" and c.s.recv(100) == b""
except ConnectionResetError:
    eof = True
result(eof, "connection closed after an oversized request")
c.s.close()

# Several requests in one write: one answer each, in order
c = Conn()
c.s.sendall(b"help\r\nstatus\nnope\n")
a1, a2, a3 = c.answer(), c.answer(), c.answer()
c.s.close()
result(a1 is not None and a1.endswith("OK") and "command: status" in a1, "pipelined help")
result(a2 is not None and a2.endswith("OK") and "state: " in a2, "pipelined status")
result(a3 is not None and a3.startswith("ERROR: unknown command 'nope'"),
       "pipelined unknown command: %r" % a3)

# Half-closed after the request: the answer still comes, then EOF
c = Conn()
c.s.sendall(b"status")
c.s.shutdown(socket.SHUT_WR)
a = c.answer()
result(a is not None and a.endswith("OK") and "state: " in a,
       "request without newline, then half-close")
c.s.close()

# One byte at a time
c = Conn()
for ch in b"check-routes\n":
    c.s.send(bytes([ch]))
    time.sleep(0.01)
a = c.answer()
result(a is not None and a.endswith("OK") and "verdict: " in a, "byte-at-a-time request")
c.s.close()

# Clients that ask and leave without reading
for _ in range(5):
    c = Conn()
    c.s.sendall(b"status\n")
    c.s.close()

# A client that asks a thousand times and never reads: smd stops reading it
c = Conn()
c.s.setblocking(False)
try:
    for _ in range(1000):
        c.s.send(b"status\n")
except BlockingIOError:
    pass
a = ask(b"help\n")
result(a is not None and a.endswith("OK"), "others served while a client reads nothing")
c.s.close()

# Idle clients fill the 16 slots: the ones beyond are told, and slots come back
time.sleep(0.3)
conns = [Conn() for _ in range(20)]
rejected = set()
deadline = time.time() + 10
while len(rejected) < 4 and time.time() < deadline:
    r, _, _ = select.select([c.s for c in conns if c.s not in rejected], [], [], 0.2)
    for sk in r:
        d = sk.recv(100)
        if d.startswith(b"ERROR: too many clients"):
            rejected.add(sk)
result(4 <= len(rejected) <= 5, "%d of 20 clients at once told there are too many" %
       len(rejected))
for c in conns:
    c.s.close()
ok = False
for _ in range(50):
    a = ask(b"help\n")
    if a is not None and a.endswith("OK"):
        ok = True
        break
    time.sleep(0.1)
result(ok, "served again once the idle clients left")

print("%d failed" % fails)
sys.exit(min(fails, 100))
