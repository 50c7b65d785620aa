#!/usr/bin/env python3
"""Writes hostile .tar.zst archives for mappack's extraction tests.

usage: hostile_archives.py OUT_DIR [CASE ...]
Each case becomes OUT_DIR/<case>.tar.zst. Needs the `zstd` command (Debian's zstd package).
"""
import io
import os
import struct
import subprocess
import sys
import tarfile
import unicodedata


def info(name, size=0, kind=tarfile.REGTYPE, **extra):
    entry = tarfile.TarInfo(name)
    entry.size = size
    entry.type = kind
    entry.mode = 0o644
    for key, value in extra.items():
        setattr(entry, key, value)
    return entry


def tar_bytes(entries, fmt=tarfile.PAX_FORMAT, encoding="utf-8"):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt, encoding=encoding, errors="surrogateescape") as tar:
        for entry, data in entries:
            tar.addfile(entry, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def file(name, data=b"payload\n"):
    return (info(name, len(data)), data)


def zstd(raw, *flags):
    return subprocess.run(["zstd", "-q", "-c", *flags], input=raw, stdout=subprocess.PIPE, check=True).stdout


def million_entries():
    # Hand-written ustar headers: far faster than tarfile for 10^6 entries.
    out = bytearray()
    for i in range(1_000_000):
        name = b"e/%07d" % i
        header = bytearray(512)
        header[0:len(name)] = name
        header[100:108] = b"0000644\0"
        header[108:116] = b"0000000\0"
        header[116:124] = b"0000000\0"
        header[124:136] = b"00000000000\0"
        header[136:148] = b"00000000000\0"
        header[148:156] = b"        "
        header[156:157] = b"0"
        header[257:263] = b"ustar\0"
        header[263:265] = b"00"
        checksum = sum(header)
        header[148:156] = b"%06o\0 " % checksum
        out += header
    out += bytes(1024)
    return bytes(out)


def window_log_31(raw):
    # A zstd frame whose header asks for a 2 GiB window (exponent 31-10), then one raw block.
    frame = struct.pack("<I", 0xFD2FB528) + bytes([0x00, (31 - 10) << 3])
    position = 0
    while position < len(raw) or position == 0:
        chunk = raw[position:position + 65536]
        position += len(chunk)
        last = 1 if position >= len(raw) else 0
        frame += struct.pack("<I", (len(chunk) << 3) | last)[:3] + chunk
        if not chunk:
            break
    return frame


# --- tar dialects mappack's reader must understand, each with the listing it must give ---------

def dialect_entries(long_name):
    big = bytes((i * 7919) % 251 for i in range(300_000))    # spans several reader buffers
    return [(info("d/", kind=tarfile.DIRTYPE), None), file("d/empty", b""), file("d/b512", b"x" * 512),
            file("d/b513", b"y" * 513), file(long_name, b"long\n"), file("d/big", big), file("d/\u00fcn\u00ef.txt", b"u\n")]


LONG = "d/" + "p" * 80 + "/" + "n" * 90     # fits ustar's prefix + name split
LONGER = "d/" + "n" * 120 + ".bin"          # does not: needs a pax path or a GNU long name


def set_field(raw, offset, length, value):
    # Changes a field of the first header and writes its checksum again.
    raw[offset:offset + length] = value
    raw[148:156] = b" " * 8
    raw[148:156] = b"%06o\0 " % sum(raw[:512])


def base256_size():
    raw = bytearray(tar_bytes([file("d/b256", b"z" * 700)], fmt=tarfile.GNU_FORMAT))
    set_field(raw, 124, 12, b"\x80" + (700).to_bytes(11, "big"))
    return bytes(raw)


def huge_size():
    raw = bytearray(tar_bytes([file("huge.bin", b"h" * 10)], fmt=tarfile.GNU_FORMAT))
    set_field(raw, 124, 12, b"\x80" + ((1 << 63) - 1).to_bytes(11, "big"))
    return bytes(raw)


def bad_checksum():
    raw = bytearray(tar_bytes([file("ok.txt")], fmt=tarfile.USTAR_FORMAT))
    raw[0] = ord("O")    # name changed, checksum not
    return bytes(raw)


def record(text):
    # "<length> <text>\n" where the length counts itself.
    n = len(text) + 2
    while len(b"%d %s\n" % (n, text)) != n:
        n += 1
    return b"%d %s\n" % (n, text)


def listing(entries):
    import hashlib
    return {name: [len(data), hashlib.sha256(data).hexdigest()] for name, data in entries}


DIALECT_FILES = [("d/empty", b""), ("d/b512", b"x" * 512), ("d/b513", b"y" * 513), ("d/big", bytes((i * 7919) % 251 for i in range(300_000))),
                 ("d/\u00fcn\u00ef.txt", b"u\n")]
DIALECTS = {
    "dialect_pax": (lambda: zstd(tar_bytes(dialect_entries(LONGER), fmt=tarfile.PAX_FORMAT)), DIALECT_FILES + [(LONGER, b"long\n")]),
    "dialect_gnu": (lambda: zstd(tar_bytes(dialect_entries(LONGER), fmt=tarfile.GNU_FORMAT)), DIALECT_FILES + [(LONGER, b"long\n")]),
    "dialect_ustar": (lambda: zstd(tar_bytes([e for e in dialect_entries(LONG) if not e[0].name.startswith("d/\u00fc")],
                                             fmt=tarfile.USTAR_FORMAT)), DIALECT_FILES[:-1] + [(LONG, b"long\n")]),
    "dialect_base256": (lambda: zstd(base256_size()), [("d/b256", b"z" * 700)]),
}

CASES = {
    "dotdot": lambda: zstd(tar_bytes([file("ok.txt"), file("../evil-dotdot.txt")])),
    "absolute": lambda: zstd(tar_bytes([file("/tmp/mappack-evil-absolute.txt")])),
    "symlink": lambda: zstd(tar_bytes([(info("link", kind=tarfile.SYMTYPE, linkname="/etc/passwd"), None)])),
    "hardlink": lambda: zstd(tar_bytes([file("a.txt"), (info("hard", kind=tarfile.LNKTYPE, linkname="a.txt"), None)])),
    "chardev": lambda: zstd(tar_bytes([(info("dev", kind=tarfile.CHRTYPE, devmajor=1, devminor=3), None)])),
    "fifo": lambda: zstd(tar_bytes([(info("pipe", kind=tarfile.FIFOTYPE), None)])),
    "duplicate": lambda: zstd(tar_bytes([file("a.txt"), file("a.txt", b"other")])),
    "case": lambda: zstd(tar_bytes([file("dir/Readme"), file("dir/README")])),
    "normalization": lambda: zstd(tar_bytes([file(unicodedata.normalize("NFC", "caf\u00e9")), file(unicodedata.normalize("NFD", "caf\u00e9"))])),
    "invalid_utf8": lambda: zstd(tar_bytes([file("bad\udcff.txt")], fmt=tarfile.GNU_FORMAT)),
    "under_file": lambda: zstd(tar_bytes([file("a"), file("a/b")])),
    # Entries in a folder already checked take a shortcut past the folders above; these must still be caught.
    "under_file_deep": lambda: zstd(tar_bytes([(info("r/", kind=tarfile.DIRTYPE), None), file("r/x/1"), file("r/x/f"), file("r/x/f/g")])),
    "file_over_folder": lambda: zstd(tar_bytes([file("r/x/1"), file("r/x/2"), file("r/x")])),
    "case_deep": lambda: zstd(tar_bytes([file("r/sub/Readme"), file("r/sub/x"), file("R/sub/y"), file("r/Sub/README")])),
    "setuid": lambda: zstd(tar_bytes([(info("tool", 4, mode=0o4755), b"exec")])),
    "bomb": lambda: zstd(tar_bytes([(info("zeros.bin", 256 << 20), bytes(256 << 20))]), "-19"),
    "million": lambda: zstd(million_entries(), "-1"),
    "window31": lambda: window_log_31(tar_bytes([file("ok.txt")])),
    "truncated": lambda: zstd(tar_bytes([file("big.bin", os.urandom(200_000))]))[:-4000],
    "bad_checksum": lambda: zstd(bad_checksum()),
    "huge_size": lambda: zstd(huge_size()),
    "pax_sparse": lambda: zstd(sparse_archive()),
    "bad_pax": lambda: zstd(bad_pax_archive()),
    "type_S": lambda: zstd(tar_bytes([(info("old-sparse", 0, kind=b"S"), None)], fmt=tarfile.GNU_FORMAT)),
    "good": lambda: zstd(tar_bytes([file("regions/x/tiles.db", b"t" * 5000), file("regions/x/empty", b"")])),
}

def with_pax(records, name, data):
    # A pax extended header with exactly these records, then the entry it describes (USTAR).
    body = b"".join(records)
    return tar_bytes([(info("PaxHeader/" + name, len(body), kind=tarfile.XHDTYPE), body), file(name, data)], fmt=tarfile.USTAR_FORMAT)


def sparse_archive():
    return with_pax([record(b"GNU.sparse.major=1"), record(b"GNU.sparse.minor=0"), record(b"GNU.sparse.name=holes.bin")], "holes.bin", b"data")


def bad_pax_archive():
    return with_pax([b"99 path=x\n"], "f.txt", b"data")


if __name__ == "__main__":
    import json
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name in sys.argv[2:] or list(CASES) + list(DIALECTS):
        if name in DIALECTS:
            make, files = DIALECTS[name]
            with open(os.path.join(out_dir, name + ".json"), "w") as handle:
                json.dump(listing(files), handle)
        else:
            make = CASES[name]
        with open(os.path.join(out_dir, name + ".tar.zst"), "wb") as handle:
            handle.write(make())
