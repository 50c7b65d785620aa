#!/usr/bin/env python3
"""An HTTP/1.1 server that plays the attacks on signed catalogs (stdlib only).

It serves one catalog URL, `/catalog.json`, and its detached signature `/catalog.json.sig`, the way a
mirror or a network in between would: what they hold changes over time, chosen by the test with

  GET /__serve?catalog=DIR&signature=DIR    /catalog.json from ROOT/DIR/catalog.json, the signature from
                                            ROOT/DIR/catalog.json.sig, bundles (/bundles/...) from the
                                            catalog's DIR. Each DIR is the output of `mappack publish`.
      signature=none                        no signature: /catalog.json.sig answers 404 (stripped)
      signature=garbage                     a signature file that is not JSON
      next-key=TEXT                         the served signature's "nextKey" replaced by TEXT after
                                            signing (an attacker slipping in a key of their own)
      timestamp=DIR                         /catalog.json.timestamp from ROOT/DIR (default none: 404,
                                            a server from before timestamps); /catalog.json.zst comes
                                            from the catalog's DIR. So a stale (older DIR), replayed
                                            (same catalog, older timestamp), expired or mismatched
                                            (another DIR's catalog) timestamp is one request away.
      etag=long|cr|plain                    every 200 answer carries an ETag: a 12,000-byte one (long),
                                            one with a bare CR inside (cr), or a short clean one (plain).
                                            Like a strict server, any request whose head is over 8 KiB or
                                            holds a bare CR is answered 400; with etag=plain, any
                                            conditional request (If-None-Match, If-Modified-Since) is too.

So one server serves every attack: unsigned (signature=none), another key (a DIR published with
another key), rollback (an older DIR after a newer one), mix-and-match (another DIR with the same
version, or catalog and signature from different DIRs), freeze (an old DIR whose expiry passed),
and key rotation (valid next key, then a DIR signed only by it; or a tampered next key).
GET /__stats answers {"<path>": {"requests": n, "refused": n}} as JSON (refused: answered 400).
Prints "PORT <n>" on stdout once listening (with --port 0 the kernel picks a free port).
"""
import argparse
import asyncio
import json
import os
import signal
import sys
import urllib.parse

stats = {}
scene = {"catalog": None, "signature": None, "next-key": None, "timestamp": None, "etag": None}
etags = {"long": b'"' + b"a" * 12000 + b'"', "cr": b'"a\rX-Injected: 1"', "plain": b'"plain-1"'}


def inside(root, *parts):
    full = os.path.normpath(os.path.join(root, *parts))
    return full if full.startswith(root + os.sep) else None


def read(path):
    if path is None or not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def body_for(root, path):
    if scene["catalog"] is None:
        return None
    if path == "/catalog.json":
        return read(inside(root, scene["catalog"], "catalog.json"))
    if path == "/catalog.json.timestamp":
        if scene["timestamp"] in (None, "none"):
            return None
        return read(inside(root, scene["timestamp"], "catalog.json.timestamp"))
    if path == "/catalog.json.sig":
        if scene["signature"] in (None, "none"):
            return None
        if scene["signature"] == "garbage":
            return b'{"format":"mappack-catalog-sig/1","version":'
        data = read(inside(root, scene["signature"], "catalog.json.sig"))
        if data is not None and scene["next-key"] is not None:
            envelope = json.loads(data)
            envelope["nextKey"] = scene["next-key"]
            data = json.dumps(envelope, sort_keys=True, separators=(",", ":")).encode()
        return data
    return read(inside(root, scene["catalog"], path.lstrip("/")))


def refusal(head):
    """Why a strict server answers 400 to this request head (its raw lines), or None."""
    if sum(len(line) for line in head) > 8192:
        return "head over 8 KiB"
    for line in head:
        if b"\r" in line.rstrip(b"\r\n"):
            return "bare CR in a header"
        name = line.split(b":", 1)[0].strip().lower()
        if scene["etag"] == "plain" and name in (b"if-none-match", b"if-modified-since"):
            return "conditional request"
    return None


async def respond(method, target, version, writer, root, head):
    url = urllib.parse.urlsplit(target)
    path = urllib.parse.unquote(url.path)
    query = dict(urllib.parse.parse_qsl(url.query))
    if path == "/__serve":
        scene["catalog"] = query.get("catalog")
        scene["signature"] = query.get("signature", scene["catalog"])
        scene["next-key"] = query.get("next-key")
        scene["timestamp"] = query.get("timestamp")
        scene["etag"] = query.get("etag")
        body = b"ok"
    elif path == "/__stats":
        body = json.dumps(stats, sort_keys=True).encode()
    else:
        entry = stats.setdefault(path, {"requests": 0, "refused": 0})
        entry["requests"] += 1
        if refusal(head) is not None:
            entry["refused"] += 1
            writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
            return False
        body = body_for(root, path)
    # HTTP/1.0 clients (the tests' control requests) read until the connection closes.
    keep = version.strip() == "HTTP/1.1"
    close = b"" if keep else b"Connection: close\r\n"
    etag = etags.get(scene["etag"])
    if body is not None and etag is not None:
        close += b"ETag: " + etag + b"\r\n"
    if body is None:
        writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n" + close + b"\r\n")
    else:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n" % len(body) + close + b"\r\n")
        if method != "HEAD":
            writer.write(body)
    await writer.drain()
    return keep


async def handle(reader, writer, root):
    try:
        while True:
            line = await reader.readline()
            if not line:
                return
            method, target, version = line.decode("latin-1").split(" ", 2)
            head = [line]
            while True:
                header = await reader.readline()
                if header in (b"\r\n", b"\n", b""):
                    break
                head.append(header)
            if not await respond(method, target, version, writer, root, head):
                return
    except (ConnectionError, asyncio.IncompleteReadError, ValueError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    server = await asyncio.start_server(lambda r, w: handle(r, w, root), "127.0.0.1", args.port)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
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
