#!/usr/bin/env python3
"""A stand-in for systemd's notification socket: bind an AF_UNIX datagram
socket at PATH and append every message sd_notify(3) sends to OUT, one line
per datagram, its assignments joined by " | ". With --time, each line
starts with the CLOCK_MONOTONIC second it arrived ("12345.678 WATCHDOG=1").
Runs until killed."""
import os
import socket
import sys
import time

args = [a for a in sys.argv[1:] if a != "--time"]
stamp = "--time" in sys.argv[1:]
path, out = args[0], args[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
with open(out, "a", buffering=1) as f:
    while True:
        msg = s.recv(65536).decode(errors="replace")
        line = " | ".join(msg.strip("\n").split("\n"))
        if stamp:
            line = "%.3f %s" % (time.monotonic(), line)
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())
