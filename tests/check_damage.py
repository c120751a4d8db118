#!/usr/bin/env python3
"""Damage a btrfs image in one precise way, keeping tree block checksums valid
(on every mirror: DUP and RAID1 metadata) and superblock copies consistent.

usage: check_damage.py [--no-csum] [--mirror N] IMAGE OP ARGS...
  set-item TREE KEY FIELD VALUE   set a field of an item (FIELD: a name of the
                                  item's layout, N.FIELD for the N-th name entry,
                                  N.name to rename an entry, or @OFF:u8|u16|u32|u64)
  set-data TREE KEY HEX           replace an item's data (resizes it)
  del-item TREE KEY               delete an item
  ins-item TREE KEY HEX|=KEY      insert an item: raw data, or a copy of another item's
  dup-entry TREE KEY [N]          append a copy of the N-th name entry to a name item
  set-key TREE KEY NEWKEY         change an item's key (the parents' keys follow;
                                  +N/-N parts of NEWKEY are relative to the old key)
  set-header TREE KEY|@BYTENR FIELD VALUE   a tree block header field
  shift-items TREE KEY            the data of the second half of the items of the leaf
                                  holding KEY moved down by half its free space, a gap
                                  left (btrfs-corrupt-block -f shift_items)
  set-super FIELD VALUE [COPY]    a superblock field (all copies, or copy COPY)
  get-item TREE KEY [FIELD]       print an item's data (hex) or a field
  ls TREE [KEY]                   list the keys (matching KEY) with their names
TREE: root extent chunk dev fs csum quota uuid free-space block-group data-reloc,
a tree id, log (the log root tree), log:ID or reloc:ID. KEY: "OBJECTID TYPE OFFSET", each
a number, a name (INODE_ITEM, FS_TREE, ORPHAN...), * (any) or $ (any, the last).
VALUE: a number, +N/-N (relative), or text / hex:HEX for byte fields.
--no-csum leaves the stale checksum; --mirror N writes only that copy; --keep-parents
leaves the parents' keys as they were (a leaf's first key damaged in the leaf alone).

legacy usage: check_damage.py BTRFS IMAGE OP
  BTRFS is the reference btrfs binary (its dump-tree locates items).
  OP: zero-leaf | nlink | drop-dir-index | extent-refs | flip-csum | drop-csum | overlap-extent
Prints what it changed."""
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import btrfs_image as bi  # noqa: E402

HEADER = bi.HEADER
ITEM = bi.ITEM
crc32c = bi.crc32c


class Image:
    def __init__(self, btrfs, path):
        self.path = path
        self.btrfs = btrfs
        self.dump = subprocess.run([btrfs, "inspect-internal", "dump-tree", path],
                                   capture_output=True, text=True, check=True).stdout
        self.fs = bi.Fs(path)
        self.nodesize = self.fs.nodesize

    def phys(self, logical):
        return self.fs.mirrors(logical)[0]

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
        self.fs.write_block(bi.Leaf(self.fs, logical, block), fix_csum)


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


def edit(args):
    """The generic operations (see the usage)."""
    fix_csum, mirror, keep_parents = True, None, False
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--no-csum":
            fix_csum = False
        elif opt == "--mirror":
            mirror = int(args.pop(0))
        elif opt == "--keep-parents":
            keep_parents = True
        else:
            raise SystemExit("unknown option " + opt)
    if len(args) < 2:
        raise SystemExit(__doc__)
    fs = bi.Fs(args[0])
    op, a = args[1], args[2:]
    need = {"set-item": 4, "set-data": 3, "del-item": 2, "ins-item": 3, "dup-entry": 2,
            "set-key": 3, "set-header": 4, "set-super": 2, "get-item": 2, "ls": 1,
            "shift-items": 2}
    if op not in need or len(a) < need[op]:
        raise SystemExit(__doc__)
    if op == "ls":
        pattern = bi.parse_key(a[1]) if len(a) > 1 else ("*", "*", "*")
        for leaf, slot in fs.walk(fs.tree_root(a[0])):
            key = leaf.key(slot)
            if bi.key_match(pattern, key):
                data, layout = leaf.data(slot), bi.LAYOUTS.get(key[1])
                names = [data[s + layout[1]:s + n - (struct.unpack_from("<H", data, s + layout[3])[0]
                                                     if layout[3] else 0)].decode(errors="replace")
                         for s, n in bi.entries(data, layout)] if isinstance(layout, tuple) else []
                print(key[0], key[1], key[2], leaf.logical, *names)
        return
    if op == "set-super":
        off, fmt = bi.SUPER_FIELDS[a[0]]
        old = struct.unpack_from(fmt, fs.sb, off)[0]
        struct.pack_into(fmt, fs.sb, off, *struct.unpack(fmt, bi.pack_value(fmt, old, a[1])))
        fs.write_super(copies=[int(a[2])] if len(a) > 2 else None, fix_csum=fix_csum)
        print("super", a[0], old, "->", struct.unpack_from(fmt, fs.sb, off)[0])
        return
    tree = a[0]
    if op == "set-header" and a[1].startswith("@"):
        leaf = fs.read_block(int(a[1][1:], 0))
    else:
        key = bi.parse_key(a[1])
        if op == "ins-item":
            # the first item after the new key, or the last one before it
            leaf = slot = None
            for leaf, slot in fs.walk(fs.tree_root(tree)):
                if leaf.key(slot) > key:
                    break
            else:
                slot += 1
            data = (fs.find(tree, bi.parse_key(a[2][1:])) if a[2].startswith("=") else None)
            data = data[0].data(data[1]) if data else bytes.fromhex(a[2])
            leaf.insert(slot, key, data)
            fs.write_block(leaf, fix_csum, mirror)
            if slot == 0:
                fs.fix_parent_keys(leaf)
            print("inserted", key, "with", len(data), "bytes in leaf", leaf.logical)
            return
        leaf, slot = fs.find(tree, key)
        key = leaf.key(slot)
    if op == "shift-items":
        gap = leaf.free_space() // 2
        leaf._shift(leaf.nritems // 2, -gap)
        fs.write_block(leaf, fix_csum, mirror)
        print("moved the data of items", leaf.nritems // 2, "to", leaf.nritems - 1, "of leaf", leaf.logical,
              "down by", gap)
        return
    if op == "set-header":
        off, fmt = bi.HEADER_FIELDS[a[2]]
        old = struct.unpack_from(fmt, leaf.b, off)[0]
        leaf.b[off:off + struct.calcsize(fmt)] = bi.pack_value(fmt, old, a[3])
        fs.write_block(leaf, fix_csum and a[2] != "csum", mirror)
        print("block", leaf.logical, a[2], old, "->", struct.unpack_from(fmt, leaf.b, off)[0])
        return
    data = bytearray(leaf.data(slot))
    if op == "get-item":
        if len(a) > 2:
            off, fmt = bi.field_location(key[1], data, a[2])
            print(struct.unpack_from(fmt, data, off)[0])
        else:
            print(data.hex())
        return
    if op == "set-item":
        off, fmt = bi.field_location(key[1], data, a[2])
        if fmt == "name":
            # a new name: the entry's name_len follows, the item is resized
            layout = bi.LAYOUTS[key[1]]
            start = off - layout[1]
            old_len = struct.unpack_from("<H", data, start + layout[2])[0]
            new = a[3].encode()
            data[off:off + old_len] = new
            struct.pack_into("<H", data, start + layout[2], len(new))
            old = new_v = a[3]
        else:
            old = struct.unpack_from(fmt, data, off)[0]
            data[off:off + struct.calcsize(fmt)] = bi.pack_value(fmt, old, a[3])
            new_v = struct.unpack_from(fmt, data, off)[0]
        leaf.set_data(slot, bytes(data))
        print("item", key, a[2], old, "->", new_v)
    elif op == "set-data":
        leaf.set_data(slot, bytes.fromhex(a[2]))
        print("item", key, "data", len(data), "->", len(a[2]) // 2, "bytes")
    elif op == "dup-entry":
        ents = bi.entries(bytes(data), bi.LAYOUTS[key[1]])
        start, n = ents[int(a[2]) if len(a) > 2 else 0]
        leaf.set_data(slot, bytes(data) + bytes(data[start:start + n]))
        print("item", key, "entry", start, "duplicated")
    elif op == "del-item":
        leaf.delete(slot)
        print("deleted", key, "from leaf", leaf.logical)
    elif op == "set-key":
        new = bi.parse_key(a[2], key)
        leaf.set_key(slot, new)
        print("key", key, "->", new)
    fs.write_block(leaf, fix_csum, mirror)
    if slot == 0 and op in ("del-item", "set-key") and leaf.nritems and not keep_parents:
        fs.fix_parent_keys(leaf)


LEGACY_OPS = ("zero-leaf", "nlink", "drop-dir-index", "extent-refs", "flip-csum", "drop-csum",
              "overlap-extent")


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in LEGACY_OPS:
        edit(sys.argv[1:])
        return
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
