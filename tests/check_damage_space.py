#!/usr/bin/env python3
"""Damage for the allocation, free space and superblock checks
(tests/check_space.test): one precise change, tree block and superblock
checksums kept valid. Built on tests/check_damage.py (same image model:
single-profile metadata, items located through the reference's dump-tree).

usage: check_damage_space.py BTRFS IMAGE OP ARGS...
  key-add OWNER KEYRE FIELD DELTA [FIELD DELTA]   objectid/offset of the last item
                                                  whose key matches (never slot 0)
  field-add OWNER KEYRE OFF SIZE DELTA [last]     the SIZE-byte integer at OFF of the
                                                  item data (first or last match)
  delete OWNER KEYRE                              removes the last matching item
  super-add FIELD DELTA                           bytes_used, total_bytes, num_devices
  v1-entry offset|bytes DELTA                     first entry of the first v1 cache file
OWNER and KEYRE are regular expressions on dump-tree's owner name and key text
(e.g. FREE_SPACE_TREE, '^\\d+ FREE_SPACE_INFO'). DELTA may be negative."""
import os
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_damage import Image, crc32c, delete_item, item  # noqa: E402

SIZES = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}
SUPER = {"total_bytes": 112, "bytes_used": 120, "num_devices": 136}


def add_int(buf, off, size, delta):
    fmt = SIZES[size]
    old = struct.unpack_from(fmt, buf, off)[0]
    new = (old + delta) % (1 << (8 * size))
    struct.pack_into(fmt, buf, off, new)
    return old, new


def key_add(img, owner, key_re, pairs):
    leaf, slot = img.find(owner, key_re, last=True)
    b = img.read(leaf)
    base = item(b, slot)[0]
    for field, delta in pairs:
        off = base + (0 if field == "objectid" else 9)
        old, new = add_int(b, off, 8, delta)
        print("key", field, old, "->", new)
    img.write(leaf, b)


def field_add(img, owner, key_re, off, size, delta, last):
    leaf, slot = img.find(owner, key_re, skip_slot0=False, last=last)
    b = img.read(leaf)
    _, obj, typ, koff, doff, isize = item(b, slot)
    if off + size > isize:
        raise SystemExit("item (%d %d %d) has %d bytes" % (obj, typ, koff, isize))
    old, new = add_int(b, doff + off, size, delta)
    img.write(leaf, b)
    print("item", (obj, typ, koff), "bytes", off, "..", off + size, old, "->", new)


def super_add(path, field, delta):
    with open(path, "r+b") as f:
        f.seek(65536)
        sb = bytearray(f.read(4096))
        old, new = add_int(sb, SUPER[field], 8, delta)
        sb[0:4] = struct.pack("<I", crc32c(bytes(sb[32:])))
        f.seek(65536)
        f.write(sb)
    print("super", field, old, "->", new)


def v1_entry(img, field, delta):
    dump = img.dump
    m = re.search(r"key \(FREE_SPACE UNTYPED (\d+)\).*?\n\s+location key \((\d+) INODE_ITEM", dump)
    if not m:
        raise SystemExit("no free space cache")
    ino = m.group(2)
    size = int(re.search(r"key \(%s INODE_ITEM 0\).*?\n\s+generation \d+ transid \d+ size (\d+)"
                         % ino, dump).group(1))
    ext = re.search(r"key \(%s EXTENT_DATA 0\).*?\n.*?\n\s+extent data disk byte (\d+).*?\n"
                    r"\s+extent data offset (\d+)" % ino, dump)
    logical = int(ext.group(1)) + int(ext.group(2))
    pages = (size + 4095) // 4096
    with open(img.path, "r+b") as f:
        f.seek(img.phys(logical))
        page = bytearray(f.read(4096))
        entry = 4 * pages + 8
        old, new = add_int(page, entry + (0 if field == "offset" else 8), 8, delta)
        page[0:4] = struct.pack("<I", crc32c(bytes(page[4 * pages:])))
        f.seek(img.phys(logical))
        f.write(page)
    print("cache of block group", m.group(1), "entry 0", field, old, "->", new)


def main():
    btrfs, path, op = sys.argv[1:4]
    a = sys.argv[4:]
    if op == "super-add":
        return super_add(path, a[0], int(a[1]))
    img = Image(btrfs, path)
    if op == "key-add":
        key_add(img, a[0], a[1], [(a[i], int(a[i + 1])) for i in range(2, len(a), 2)])
    elif op == "field-add":
        field_add(img, a[0], a[1], int(a[2]), int(a[3]), int(a[4]), a[5:] == ["last"])
    elif op == "delete":
        leaf, slot = img.find(a[0], a[1], last=True)
        b = img.read(leaf)
        delete_item(b, slot)
        img.write(leaf, b)
        print("deleted slot", slot, "of leaf", leaf)
    elif op == "v1-entry":
        v1_entry(img, a[0], int(a[1]))
    else:
        raise SystemExit("unknown op " + op)


if __name__ == "__main__":
    main()
