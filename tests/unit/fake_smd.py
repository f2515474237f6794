#!/usr/bin/env python3
"""A stand-in for smd's control socket that answers `metrics` badly.

    fake_smd.py SOCKET MODE...

Each accepted connection gets the next MODE (the last one repeats); the
request line is read first. One line per connection goes to stdout:
"conn N MODE". Modes:
  good      a valid answer (one family), status line, OK
  split     the same, a few bytes at a time, "OK" cut in two
  garbage   bytes that are not the format, with a NUL
  error     ERROR: the way smd refuses
  nostatus  the format, then OK with no status line before it
  own       a series the exporter writes itself (smd_up)
  close     hang up without a word
  silent    say nothing, keep the connection open (300 s)
  drip      one valid byte every 0.2 s, never the end (300 s)
  huge      valid-looking lines without end (the exporter's size bound stops it)
"""
import socket
import sys
import threading
import time

GOOD = (b"# HELP smd_fake_total A fake counter\n# TYPE smd_fake_total counter\n"
        b"smd_fake_total 42\nstatus: ok\nOK\n")


def serve(conn, mode):
    try:
        conn.settimeout(300)
        req = b""
        while not req.endswith(b"\n"):
            d = conn.recv(512)
            if not d:
                return
            req += d
        if mode == "good":
            conn.sendall(GOOD)
        elif mode == "split":
            body = GOOD[:-3]
            for i in range(0, len(body), 5):
                conn.sendall(body[i:i + 5])
                time.sleep(0.01)
            conn.sendall(b"O")
            time.sleep(0.05)
            conn.sendall(b"K\n")
        elif mode == "garbage":
            conn.sendall(b"\x00\x01 hello {{{\nstatus: ok\nOK\n")
        elif mode == "error":
            conn.sendall(b"ERROR: out of memory\n")
        elif mode == "nostatus":
            conn.sendall(b"# HELP smd_x x\n# TYPE smd_x gauge\nsmd_x 1\nOK\n")
        elif mode == "own":
            conn.sendall(b"# HELP smd_up x\n# TYPE smd_up gauge\nsmd_up 1\nstatus: ok\nOK\n")
        elif mode == "close":
            pass
        elif mode == "silent":
            time.sleep(300)
        elif mode == "drip":
            for _ in range(1500):
                conn.sendall(b"s")
                time.sleep(0.2)
        elif mode == "huge":
            chunk = b"smd_fake 1\n" * 100000
            while True:
                conn.sendall(chunk)
    except OSError:
        pass
    finally:
        conn.close()


def main():
    path, modes = sys.argv[1], sys.argv[2:]
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(16)
    print("ready", flush=True)
    n = 0
    while True:
        conn, _ = srv.accept()
        mode = modes[min(n, len(modes) - 1)]
        print("conn", n, mode, flush=True)
        n += 1
        threading.Thread(target=serve, args=(conn, mode), daemon=True).start()


if __name__ == "__main__":
    main()
