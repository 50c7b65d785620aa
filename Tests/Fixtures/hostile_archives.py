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
    "good": lambda: zstd(tar_bytes([file("regions/x/tiles.db", b"t" * 5000), file("regions/x/empty", b"")])),
}

if __name__ == "__main__":
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name in sys.argv[2:] or CASES:
        with open(os.path.join(out_dir, name + ".tar.zst"), "wb") as handle:
            handle.write(CASES[name]())
