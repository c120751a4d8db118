#!/usr/bin/env python3
"""Damage a btrfs image in one precise way, keeping tree block checksums valid.

usage: check_damage.py BTRFS IMAGE OP
  BTRFS is the reference btrfs binary (its dump-tree locates items).
  OP: zero-leaf | nlink | drop-dir-index | extent-refs | flip-csum | drop-csum | overlap-extent
Single-profile metadata is assumed (mkfs -m single): logical -> physical comes
from the chunk tree as dump-tree prints it. Prints what it changed."""
import re
import struct
import subprocess
import sys

HEADER = 101
ITEM = 25


def crc32c(data, crc=0xFFFFFFFF):
    table = crc32c.table
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


crc32c.table = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    crc32c.table.append(c)


class Image:
    def __init__(self, btrfs, path):
        self.path = path
        self.btrfs = btrfs
        self.dump = subprocess.run([btrfs, "inspect-internal", "dump-tree", path],
                                   capture_output=True, text=True, check=True).stdout
        sup = subprocess.run([btrfs, "inspect-internal", "dump-super", path],
                             capture_output=True, text=True, check=True).stdout
        self.nodesize = int(re.search(r"^nodesize\s+(\d+)", sup, re.M).group(1))
        self.chunks = []
        for m in re.finditer(r"key \(FIRST_CHUNK_TREE CHUNK_ITEM (\d+)\).*?\n\s+length (\d+).*?"
                             r"stripe 0 devid \d+ offset (\d+)", self.dump, re.S):
            self.chunks.append(tuple(int(x) for x in m.groups()))

    def phys(self, logical):
        for start, length, off in self.chunks:
            if start <= logical < start + length:
                return off + logical - start
        raise SystemExit("logical %d not mapped" % logical)

    def find(self, owner_re, key_re, skip_slot0=True, last=False):
        """(leaf bytenr, slot) of an item whose key matches, in a leaf of owner."""
        leaf = owner = None
        hits = []
        for line in self.dump.splitlines():
            m = re.match(r"leaf (\d+) items \d+ .* owner (\S+)", line)
            if m:
                leaf, owner = int(m.group(1)), m.group(2)
                continue
            m = re.match(r"\titem (\d+) key \((.*?)\) itemoff", line)
            if m and leaf is not None and re.fullmatch(owner_re, owner) and re.search(key_re, m.group(2)):
                slot = int(m.group(1))
                if skip_slot0 and slot == 0:
                    continue
                hits.append((leaf, slot))
        if not hits:
            raise SystemExit("no item matches %s in %s" % (key_re, owner_re))
        return hits[-1] if last else hits[0]

    def read(self, logical):
        with open(self.path, "rb") as f:
            f.seek(self.phys(logical))
            return bytearray(f.read(self.nodesize))

    def write(self, logical, block, fix_csum=True):
        if fix_csum:
            block[0:4] = struct.pack("<I", crc32c(bytes(block[32:])))
        with open(self.path, "r+b") as f:
            f.seek(self.phys(logical))
            f.write(block)


def item(block, slot):
    base = HEADER + slot * ITEM
    objectid, typ, offset, data_off, size = struct.unpack_from("<QBQII", block, base)
    return base, objectid, typ, offset, HEADER + data_off, size


def delete_item(block, slot):
    nritems = struct.unpack_from("<I", block, 96)[0]
    _, _, _, _, doff, size = item(block, slot)
    # data of the later items lies below this one: move it up by size
    if slot + 1 < nritems:
        _, _, _, _, low, _ = item(block, nritems - 1)
        block[low + size:doff + size] = block[low:doff]
        for s in range(slot + 1, nritems):
            base = HEADER + s * ITEM
            off = struct.unpack_from("<I", block, base + 17)[0]
            struct.pack_into("<I", block, base + 17, off + size)
    start = HEADER + slot * ITEM
    end = HEADER + nritems * ITEM
    block[start:end - ITEM] = block[start + ITEM:end]
    block[end - ITEM:end] = bytes(ITEM)
    struct.pack_into("<I", block, 96, nritems - 1)


def main():
    btrfs, path, op = sys.argv[1:4]
    img = Image(btrfs, path)
    fs_owner = r"FS_TREE|\d+"
    if op == "zero-leaf":
        leaf, _ = img.find(fs_owner, r"INODE_ITEM", skip_slot0=False)
        img.write(leaf, bytearray(img.nodesize), fix_csum=False)
        print("zeroed leaf", leaf)
        return
    if op == "nlink":
        leaf, slot = img.find(fs_owner, r"^25[7-9] INODE_ITEM 0$")
        b = img.read(leaf)
        _, obj, _, _, doff, _ = item(b, slot)
        # btrfs_inode_item: generation transid size nbytes block_group nlink(u32)
        nlink = struct.unpack_from("<I", b, doff + 40)[0]
        struct.pack_into("<I", b, doff + 40, nlink + 1)
        img.write(leaf, b)
        print("inode", obj, "nlink", nlink, "->", nlink + 1)
    elif op == "drop-dir-index":
        leaf, slot = img.find(fs_owner, r"DIR_INDEX", last=True)
        b = img.read(leaf)
        _, obj, _, off, _, _ = item(b, slot)
        delete_item(b, slot)
        img.write(leaf, b)
        print("deleted dir index", obj, off)
    elif op == "extent-refs":
        leaf, slot = img.find(r"EXTENT_TREE", r"EXTENT_ITEM \d+$")
        b = img.read(leaf)
        _, obj, _, _, doff, _ = item(b, slot)
        refs = struct.unpack_from("<Q", b, doff)[0]
        struct.pack_into("<Q", b, doff, refs + 1)
        img.write(leaf, b)
        print("extent", obj, "refs", refs, "->", refs + 1)
    elif op == "flip-csum":
        leaf, slot = img.find(r"CSUM_TREE", r"EXTENT_CSUM EXTENT_CSUM", skip_slot0=False)
        b = img.read(leaf)
        _, _, _, off, doff, _ = item(b, slot)
        b[doff] ^= 0x01
        img.write(leaf, b)
        print("flipped a csum byte of the item at", off)
    elif op == "drop-csum":
        leaf, slot = img.find(r"CSUM_TREE", r"EXTENT_CSUM EXTENT_CSUM", last=True)
        b = img.read(leaf)
        _, _, _, off, _, _ = item(b, slot)
        delete_item(b, slot)
        img.write(leaf, b)
        print("deleted the csum item at", off)
    elif op == "overlap-extent":
        leaf, slot = img.find(fs_owner, r"EXTENT_DATA [1-9]\d*$")
        b = img.read(leaf)
        base, obj, _, off, _, _ = item(b, slot)
        struct.pack_into("<Q", b, base + 9, off - 4096)
        img.write(leaf, b)
        print("inode", obj, "extent at", off, "moved to", off - 4096)
    else:
        raise SystemExit("unknown op " + op)


if __name__ == "__main__":
    main()
