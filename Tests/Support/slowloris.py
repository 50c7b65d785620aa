#!/usr/bin/env python3
"""Slow clients against a server on 127.0.0.1, then one ordinary request among them (stdlib only).

Opens --connections sockets to --port and sends each one byte of a request head that never ends,
every --interval seconds, for at most --duration seconds (a slowloris). Once they are open, it also
sends one ordinary request (GET --path, HTTP/1.1, Connection: close) and waits for its answer
until --deadline seconds after it was sent. Every loop is bounded by --duration.

Prints one JSON line: {"opened": n, "closedByServer": n, "normalStatus": int or null,
"normalSeconds": float or null} -- closedByServer counts the slow connections the server ended
(read end of file or reset) before --duration was up. With --oversized, each slow head starts with
20 KB of headers, so the server answers 431 at once and then drains what is still sent; a
connection counts as ended when a send to it fails.
"""
import argparse
import json
import select
import socket
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--connections", type=int, default=40)
    parser.add_argument("--interval", type=float, default=0.3)
    parser.add_argument("--duration", type=float, default=20)
    parser.add_argument("--deadline", type=float, default=15)
    parser.add_argument("--path", default="/tilejson.json")
    parser.add_argument("--oversized", action="store_true", help="open each slow head with 20 KB of headers (over the server's bound)")
    args = parser.parse_args()

    start = time.monotonic()
    slow = []
    for _ in range(args.connections):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", args.port))
            s.sendall(b"GET / HTTP/1.1\r\nX-a: " + (b"a" * 20000 if args.oversized else b""))
        except OSError:
            s.close()
            continue
        s.setblocking(False)
        slow.append(s)
    opened = len(slow)

    normal = socket.create_connection(("127.0.0.1", args.port), timeout=2)
    normal.sendall(f"GET {args.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    normal.setblocking(False)
    sent_at = time.monotonic()
    answer = b""
    normal_status = None
    normal_seconds = None

    closed = 0
    finished = set()
    next_drip = time.monotonic()
    end = start + args.duration
    while time.monotonic() < end and (slow or normal is not None):
        now = time.monotonic()
        if normal is not None and now - sent_at > args.deadline:
            normal.close()
            normal = None
        watched = [s for s in slow if s not in finished] + ([normal] if normal is not None else [])
        timeout = max(0.0, min(next_drip, end) - now)
        readable, _, _ = select.select(watched, [], [], timeout)
        for s in readable:
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if s is normal:
                answer += data
                if not data or b"\r\n" in answer:
                    if answer.startswith(b"HTTP/1.1 "):
                        normal_status = int(answer[9:12])
                        normal_seconds = round(time.monotonic() - sent_at, 2)
                    normal.close()
                    normal = None
            elif not data and args.oversized:
                # The server answered 431 and shut its side; it may still be reading: only a failed
                # send says it closed the connection.
                finished.add(s)
            elif not data:
                # End of file or reset: the server dropped this slow client.
                slow.remove(s)
                s.close()
                closed += 1
        if time.monotonic() >= next_drip:
            for s in list(slow):
                try:
                    s.send(b"a")
                except OSError:
                    slow.remove(s)
                    s.close()
                    closed += 1
            next_drip = time.monotonic() + args.interval
    for s in slow:
        s.close()
    print(json.dumps({"opened": opened, "closedByServer": closed, "normalStatus": normal_status, "normalSeconds": normal_seconds}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
