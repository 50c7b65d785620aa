#!/usr/bin/env python3
"""Compresses a file with libarchive's own zstd write filter, as mappack's `ArchiveWriter` did before
it compressed through a reused zstd context (issue 46): the reference its frames must equal.

    libarchive_zstd.py LEVEL INPUT OUTPUT

The input's bytes go through `archive_write_add_filter_zstd` at `compression-level` LEVEL as the one
entry of libarchive's `raw` format, written with `archive_write_open_filename` (libarchive13 through
ctypes). Exit 0 when written, 1 on a libarchive failure, 2 on bad usage.
"""

import ctypes
import sys


def main(argv):
    if len(argv) != 3 or not argv[0].isdigit():
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    level, source, target = argv
    data = open(source, "rb").read()
    la = ctypes.CDLL("libarchive.so.13")
    la.archive_write_new.restype = ctypes.c_void_p
    la.archive_entry_new.restype = ctypes.c_void_p
    la.archive_error_string.restype = ctypes.c_char_p
    la.archive_error_string.argtypes = [ctypes.c_void_p]
    for name in ("archive_write_add_filter_zstd", "archive_write_set_format_raw", "archive_write_close", "archive_write_free"):
        getattr(la, name).argtypes = [ctypes.c_void_p]
    la.archive_write_set_filter_option.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
    la.archive_write_open_filename.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    la.archive_write_header.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    la.archive_entry_set_filetype.argtypes = [ctypes.c_void_p, ctypes.c_uint]
    la.archive_entry_set_pathname.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    la.archive_entry_set_size.argtypes = [ctypes.c_void_p, ctypes.c_int64]
    la.archive_write_data.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    la.archive_write_data.restype = ctypes.c_ssize_t

    archive = la.archive_write_new()
    entry = la.archive_entry_new()
    steps = [
        lambda: la.archive_write_add_filter_zstd(archive),
        lambda: la.archive_write_set_filter_option(archive, b"zstd", b"compression-level", level.encode()),
        lambda: la.archive_write_set_format_raw(archive),
        lambda: la.archive_write_open_filename(archive, target.encode()),
    ]
    for step in steps:
        if step() != 0:
            print(f"libarchive: {la.archive_error_string(archive)}", file=sys.stderr)
            return 1
    la.archive_entry_set_filetype(entry, 0o100000)
    la.archive_entry_set_pathname(entry, b"data")
    la.archive_entry_set_size(entry, len(data))
    if la.archive_write_header(archive, entry) != 0:
        print(f"libarchive: {la.archive_error_string(archive)}", file=sys.stderr)
        return 1
    position = 0
    while position < len(data):
        piece = data[position:position + 65536]
        written = la.archive_write_data(archive, piece, len(piece))
        if written <= 0:
            print(f"libarchive: {la.archive_error_string(archive)}", file=sys.stderr)
            return 1
        position += written
    closed = la.archive_write_close(archive)
    la.archive_write_free(archive)
    return 0 if closed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
