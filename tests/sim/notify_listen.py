#!/usr/bin/env python3
"""A stand-in for systemd's notification socket: bind an AF_UNIX datagram
socket at PATH and append every message sd_notify(3) sends to OUT, one line
per datagram, its assignments joined by " | ". Runs until killed."""
import os
import socket
import sys

path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
with open(out, "a", buffering=1) as f:
    while True:
        msg = s.recv(65536).decode(errors="replace")
        f.write(" | ".join(msg.strip("\n").split("\n")) + "\n")
        f.flush()
        os.fsync(f.fileno())
