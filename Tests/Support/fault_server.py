#!/usr/bin/env python3
"""A fault-injecting HTTP/1.1 file server for mappack's fetch tests (stdlib only).

Serves files under --root. Faults are chosen per request by query parameters, so one
server serves every test:

  fault=reset         send `after` body bytes, then reset the connection (RST)
  fault=truncate      declare Content-Length `after`, send that much and close
  fault=ignore-range  always answer 200 with the whole file
  fault=change        a new ETag on every request (the file "changed"), so If-Range fails
  fault=trickle       send `rate` bytes per second
  fault=stall         wait `seconds` before the status line
  fault=hold          send `after` body bytes, then hold the rest until the client goes away (or
                      `seconds`, default 600, pass): a transfer that is always mid-body when the
                      client pauses or cancels it, however slow the machine
  fault=status        answer `code` (e.g. 503, 429, 404) with Retry-After: `retry-after`
  fault=flip          flip the byte at offset `at`
  fault=extra         declare and send `extra` more bytes than the file has
  fault=nolength      no Content-Length: the body ends when the connection closes

A request for several ranges (Range: bytes=a-b,c-d) is answered as multipart/byteranges, unless:
  fault=ignore-multirange  answer 200 with the whole file (single ranges still work)
  fault=single-range       answer only the first range, as a plain 206
  fault=bad-boundary       the delimiter before the second part is damaged
  fault=bad-part-range     the first part's Content-Range names a range that was not asked for

  times=N             apply the fault to the first N requests for the path only (default: all)
  skip=N              ... except the first N of them (default 0)
  always=F,G          faults applied to every request, whatever `times` says
  only=SUFFIX         faults only for paths ending in SUFFIX (a catalog's query reaches its
                      .timestamp, .sig and .zst: only=.sig fails the signature alone)

Several faults combine with commas: fault=reset,ignore-range.
GET /__stats answers {"<path>": {"requests": n, "bytes": body bytes sent}} as JSON.
Prints "PORT <n>" on stdout once listening (with --port 0 the kernel picks a free port).
"""
import argparse
import asyncio
import hashlib
import json
import os
import signal
import socket
import struct
import sys
import urllib.parse

stats = {}


def parse_ranges(value, size):
    """The ranges of a Range header as (start, end) pairs, or None without one (suffix ranges unsupported)."""
    if not value or not value.startswith("bytes="):
        return None
    out = []
    for spec in value[6:].split(","):
        start, _, end = spec.strip().partition("-")
        if not start:
            return None
        start = int(start)
        end = int(end) if end else size - 1
        out.append((start, min(end, size - 1)))
    return out


BOUNDARY = "mappack-fault-0123456789"


def multipart(content, ranges, faults):
    """A multipart/byteranges body for `ranges` of `content`, damaged as `faults` say."""
    body = b""
    for index, (start, end) in enumerate(ranges):
        delimiter = "\r\n--" + BOUNDARY
        if index == 1 and "bad-boundary" in faults:
            delimiter = "\r\n--" + BOUNDARY[:-1] + "X"
        shown = (start + 1, end + 1) if index == 0 and "bad-part-range" in faults else (start, end)
        head = f"{delimiter}\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes {shown[0]}-{shown[1]}/{len(content)}\r\n\r\n"
        body += head.encode("latin-1") + content[start:end + 1]
    return body + f"\r\n--{BOUNDARY}--\r\n".encode("latin-1")


async def handle(reader, writer, root):
    writer.transport.set_write_buffer_limits(high=16384)
    try:
        while True:
            line = await reader.readline()
            if not line:
                return
            method, target, _ = line.decode("latin-1").split(" ", 2)
            headers = {}
            while True:
                h = await reader.readline()
                if h in (b"\r\n", b"\n", b""):
                    break
                name, _, value = h.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            keep = await respond(method, target, headers, writer, root, reader)
            if not keep:
                return
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def send_head(writer, status, reason, fields):
    lines = [f"HTTP/1.1 {status} {reason}"] + [f"{k}: {v}" for k, v in fields.items()] + ["", ""]
    writer.write("\r\n".join(lines).encode("latin-1"))
    await writer.drain()


async def send_body(writer, path, data, rate=None):
    step = 1024 if rate is None else max(1, rate // 10)
    for i in range(0, len(data), step):
        piece = data[i:i + step]
        writer.write(piece)
        stats[path]["bytes"] += len(piece)
        await writer.drain()
        if rate is not None:
            await asyncio.sleep(len(piece) / rate)


async def respond(method, target, headers, writer, root, reader=None):
    url = urllib.parse.urlsplit(target)
    path = urllib.parse.unquote(url.path)
    if path == "/__stats":
        body = json.dumps(stats, sort_keys=True).encode()
        await send_head(writer, 200, "OK", {"Content-Type": "application/json", "Content-Length": len(body), "Connection": "close"})
        writer.write(body)
        await writer.drain()
        return False
    query = dict(urllib.parse.parse_qsl(url.query))
    entry = stats.setdefault(path, {"requests": 0, "bytes": 0})
    entry["requests"] += 1
    times = int(query.get("times", "1000000000"))
    skip = int(query.get("skip", "0"))
    faults = set(query.get("fault", "").split(",")) - {""} if skip < entry["requests"] <= times else set()
    faults |= set(query.get("always", "").split(",")) - {""}
    if "only" in query and not path.endswith(query["only"]):
        faults = set()

    full = os.path.normpath(os.path.join(root, path.lstrip("/")))
    if not full.startswith(os.path.abspath(root)) or not os.path.isfile(full):
        await send_head(writer, 404, "Not Found", {"Content-Length": 0})
        return True
    with open(full, "rb") as f:
        content = f.read()
    size = len(content)
    etag = '"%s"' % hashlib.sha256(content).hexdigest()[:16]
    if "change" in faults:
        etag = '"v%d-%s"' % (entry["requests"], etag.strip('"'))

    if "stall" in faults:
        await asyncio.sleep(float(query.get("seconds", "30")))
    if "status" in faults:
        code = int(query.get("code", "503"))
        fields = {"Content-Length": 0}
        if "retry-after" in query:
            fields["Retry-After"] = query["retry-after"]
        await send_head(writer, code, "Fault", fields)
        return True
    if "flip" in faults:
        at = int(query.get("at", "0")) % size
        content = content[:at] + bytes([content[at] ^ 0xFF]) + content[at + 1:]
    if "extra" in faults:
        content = content + os.urandom(int(query.get("extra", "1024")))

    status, reason, start, end = 200, "OK", 0, len(content) - 1
    wanted = parse_ranges(headers.get("range"), len(content))
    if_range = headers.get("if-range")
    if wanted and len(wanted) > 1 and "single-range" in faults:
        wanted = wanted[:1]
    parts = None
    if wanted and "ignore-range" not in faults and (if_range is None or if_range == etag):
        if any(start >= len(content) for start, _ in wanted):
            await send_head(writer, 416, "Range Not Satisfiable", {"Content-Range": f"bytes */{len(content)}", "Content-Length": 0})
            return True
        if len(wanted) == 1:
            status, reason, (start, end) = 206, "Partial Content", wanted[0]
        elif "ignore-multirange" not in faults:
            status, reason, parts = 206, "Partial Content", wanted
    body = content[start:end + 1] if parts is None else multipart(content, parts, faults)
    fields = {"Content-Type": "application/octet-stream", "ETag": etag, "Accept-Ranges": "bytes"}
    if parts is not None:
        fields["Content-Type"] = f"multipart/byteranges; boundary={BOUNDARY}"
    elif status == 206:
        fields["Content-Range"] = f"bytes {start}-{end}/{len(content)}"
    cut = int(query.get("after", "0"))
    if "truncate" in faults:
        body = body[:cut]
    if "nolength" in faults:
        fields["Connection"] = "close"
    else:
        fields["Content-Length"] = len(body)
    if method == "HEAD":
        await send_head(writer, status, reason, fields)
        return True
    await send_head(writer, status, reason, fields)
    if "reset" in faults:
        await send_body(writer, path, body[:cut])
        # Let what was counted as sent reach the client before the reset, so the counters mean bytes delivered.
        while writer.transport.get_write_buffer_size() > 0:
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.05)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
        return False
    if "hold" in faults:
        await send_body(writer, path, body[:cut])
        def gone():
            return writer.transport.is_closing() or (reader is not None and reader.at_eof())
        waited, limit = 0.0, float(query.get("seconds", "600"))
        while waited < limit and not gone():
            await asyncio.sleep(0.02)
            waited += 0.02
        if gone():
            return False
        body = body[cut:]
    rate = int(query["rate"]) if "trickle" in faults else None
    await send_body(writer, path, body, rate)
    if "truncate" in faults or "nolength" in faults:
        return False
    return True


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    server = await asyncio.start_server(lambda r, w: handle(r, w, root), "127.0.0.1", args.port)
    port = server.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    # A parent that blocks signals in its threads (a Swift test runner) passes the mask on; undo it so
    # SIGTERM stops the server.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
