#!/usr/bin/env python3
"""Repair campaign: small filesystems damaged at random, one damage each, run through a
repair sequence as a user in trouble would, by btrfsbox and (when given) the reference:
  check --repair; check --repair again; then, while the judge's check still fails,
  check --repair --init-extent-tree and check --repair --init-csum-tree.
Judged by the judge's check (the reference btrfs check: exit 0 is clean), a read-only
kernel mount with every file compared against the truth recorded when the base was
made, and a read-write mount that writes a file and passes the judge's check after.
A trial is "worse" when fewer files (path and content) are recoverable after the
sequence than before it (the best of btrfsbox restore and a read-only kernel mount).

Damage classes, in every tree (root, extent, chunk, dev, fs, subvolumes, csum, free space,
block group, uuid, quota, data reloc): zero (a tree block zeroed on every copy),
bitflip (bits flipped inside a leaf, checksum made valid), field (an item field or key
set to another value, checksum valid), delete (an item deleted, checksum valid),
lostwrite (a transaction of changes made through the kernel, then some of its tree
blocks given back what their places held before it: tests/lost_write.py); with
--corrupt-block, corrupt (a damage made by btrfs-corrupt-block itself: an inode, file
extent, dir item, block group, key or item offset field, a deleted item or checksum, an
extent record or records all over the extent tree, a tree block's generation, keys
shifted or one key swapped for another).

usage: repair_campaign.py bases DIR [--mkfs MKFS] [--btrfs BTRFS] [--only NAME,...]
           base images: SINGLE and DUP metadata, 16 KiB and 4 KiB nodes, quotas; files of all
           sizes, inline files, hard links, xattrs, symlinks, a sparse file, zstd compressed
           files, a subvolume and a snapshot of it sharing extents (root, kernel, loop)
       repair_campaign.py run --box BIN --bases DIR --work DIR [-n N] [--seed S]
           [--ref BTRFS] [--judge BTRFS] [--classes zero,bitflip,field,delete,lostwrite[,corrupt]]
           [--trees ...] [--corrupt-block BTRFS-CORRUPT-BLOCK]
           [--keep] [--only N,...] [--log FILE]
       repair_campaign.py damage IMAGE CLASS [--tree TREE] [--seed S]   one damage
       repair_campaign.py files IMAGE TRUTH   a kernel mount's files against the truth
Prints the table of the issue for each tool and the trials per damage class; exits 1
when btrfsbox crashed or hung, made a trial worse, or its clean result was refused by
the kernel."""
import argparse
import fcntl
import hashlib
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import btrfs_image as bi  # noqa: E402
import lost_write as lw  # noqa: E402

U64 = 1 << 64
CLASSES = ("zero", "bitflip", "field", "delete", "lostwrite")
TREE_NAMES = {1: "root", 2: "extent", 3: "chunk", 4: "dev", 5: "fs", 7: "csum", 8: "quota",
              9: "uuid", 10: "free-space", 11: "block-group", U64 - 9: "data-reloc"}
BASES = (  # name, mkfs options, quotas, snapshots of the top subvolume (snapshot_rounds),
           # files of one wide directory (wide_dir), shared and split data extents (reflinks)
    ("single", ["-m", "single", "-d", "single"], False, 0, 0, False),
    ("dup", ["-m", "dup", "-d", "single"], False, 0, 0, False),
    ("dup4k", ["-m", "dup", "-n", "4096"], False, 0, 0, False),
    ("quota", ["-m", "dup", "-n", "4096"], True, 0, 0, False),
)
EXTRA_BASES = (  # `bases --extra`: other layouts for longer campaigns
    ("xxhash", ["-m", "dup", "--csum", "xxhash"], False, 0, 0, False),
    ("sha256", ["-m", "single", "--csum", "sha256", "-n", "8192"], False, 0, 0, False),
    ("holes", ["-m", "dup", "-O", "^no-holes"], False, 0, 0, False),
    ("mixed", ["-M"], False, 0, 0, False),
    ("node64k", ["-m", "dup", "-n", "65536"], True, 0, 0, False),
    ("snaps", ["-m", "dup", "-n", "4096"], True, 5, 0, False),
    ("wide", ["-m", "dup", "-n", "4096"], False, 1, 4000, False),
    ("reflink", ["-m", "dup", "-n", "4096"], True, 1, 0, True),
)
FICLONE, FICLONERANGE = 0x40049409, 0x4020940d    # ioctls: _IOW(0x94, 9, int), _IOW(0x94, 13, struct file_clone_range)
TIMEOUT = 120          # a repair step of these small filesystems taking longer hangs


def run(cmd, timeout=TIMEOUT, **kw):
    """(exit code, output); 124 on a timeout; -signal when killed by one."""
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                           stdin=subprocess.DEVNULL, **kw)
        return r.returncode, r.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or b"").decode(errors="replace")


def copy(src, dst):
    if subprocess.run(["cp", "--sparse=always", src, dst]).returncode:
        raise SystemExit("cannot copy %s" % src)


# ---- base images -----------------------------------------------------------------------

def populate(root, rnd, btrfs):
    """Files of every kind under root (a mounted btrfs), deterministic for rnd."""
    def data(n, compressible=False):
        if compressible:
            words = [b"alpha", b"beta", b"gamma", b"delta", b"\n", b" "]
            return b"".join(rnd.choice(words) for _ in range(n // 4 + 1))[:n]
        return rnd.randbytes(n)
    sizes = (0, 1, 100, 1500, 3000, 4096, 5000, 20000, 65536, 131072 + 7, 1 << 20)
    files = []
    for d in range(6):
        dd = os.path.join(root, "d%d" % d, "sub%d" % (d % 3))
        os.makedirs(dd)
        for i in range(40):
            p = os.path.join(dd, "f%03d" % i)
            with open(p, "wb") as f:
                f.write(data(rnd.choice(sizes), compressible=i % 3 == 0))
            files.append(p)
    for i in range(12):     # hard links, some across directories
        os.link(files[i * 7], os.path.join(root, "d%d" % (i % 6), "link%d" % i))
    for i in range(20):
        os.setxattr(files[i * 5 + 1], b"user.note", b"x" * (i * 13 + 1))
    for i in range(8):
        os.symlink("../d1/sub1/f%03d" % i, os.path.join(root, "d0", "sym%d" % i))
    with open(os.path.join(root, "sparse"), "wb") as f:
        f.truncate(8 << 20)
        f.seek(3 << 20)
        f.write(data(70000))
    z = os.path.join(root, "z")
    os.mkdir(z)
    run([btrfs, "property", "set", z, "compression", "zstd"])
    for i in range(25):
        with open(os.path.join(z, "c%02d" % i), "wb") as f:
            f.write(data(rnd.choice((3000, 50000, 300000)), compressible=True))
    sv = os.path.join(root, "sv")
    run([btrfs, "subvolume", "create", sv])
    for i in range(60):
        with open(os.path.join(sv, "s%02d" % i), "wb") as f:
            f.write(data(rnd.choice(sizes), compressible=i % 2 == 0))
    os.sync()
    run([btrfs, "subvolume", "snapshot", sv, os.path.join(root, "snap")])
    for i in range(0, 60, 9):    # the subvolume moves on; the snapshot keeps the old data
        with open(os.path.join(sv, "s%02d" % i), "r+b") as f:
            f.seek(100)
            f.write(b"changed after the snapshot")
    os.sync()


def snapshot_rounds(root, rnd, btrfs, n):
    """n snapshots of the top subvolume, files rewritten, removed and added between them:
    trees that share blocks many ways (shared and full back references)."""
    for r in range(n):
        run([btrfs, "subvolume", "snapshot", root, os.path.join(root, "top%d" % r)])
        d = os.path.join(root, "d%d" % (r % 6), "sub%d" % (r % 6 % 3))
        names = sorted(os.listdir(d))
        for name in names[r::7]:
            with open(os.path.join(d, name), "r+b") as f:
                f.write(rnd.randbytes(rnd.choice((10, 3000, 9000))))
        for name in names[r + 3::11]:
            os.unlink(os.path.join(d, name))
        for i in range(rnd.randint(3, 12)):
            with open(os.path.join(d, "r%dn%d" % (r, i)), "wb") as f:
                f.write(rnd.randbytes(rnd.choice((50, 2000, 40000))))
        os.sync()


def wide_dir(root, rnd, n):
    """n small files (inline, a few with one data block) in one directory, some of them
    hard links from a second one: trees of three levels with 4 KiB nodes."""
    if not n:
        return
    w = os.path.join(root, "wide")
    os.makedirs(os.path.join(w, "links"))
    for i in range(n):
        p = os.path.join(w, "w%05d" % i)
        with open(p, "wb") as f:
            f.write(rnd.randbytes(rnd.choice((0, 30, 200, 800, 5000))))
        if i % 97 == 0:
            os.link(p, os.path.join(w, "links", "l%05d" % i))
    os.sync()


def reflinks(root, rnd):
    """Data extents that several files and offsets share (whole and partial clones),
    extents split by writes into their middle (file extent offsets inside the extent),
    preallocated ranges, partly written, and a compressed file cloned."""
    r = os.path.join(root, "r")
    os.mkdir(r)
    for i in range(30):
        src = os.path.join(r, "src%02d" % i)
        with open(src, "wb") as f:
            f.write(rnd.randbytes(rnd.choice((8192, 65536, 300000))))
        os.sync()
        size = os.path.getsize(src)
        with open(src, "rb") as s, open(os.path.join(r, "whole%02d" % i), "wb") as d:
            fcntl.ioctl(d.fileno(), FICLONE, s.fileno())
        with open(src, "rb") as s, open(os.path.join(r, "part%02d" % i), "wb") as d:
            d.truncate(size + 8192)     # a clone of the middle, past a hole
            rng = struct.pack("<qQQQ", s.fileno(), 4096, (size - 4096) // 8192 * 4096, 8192)
            fcntl.ioctl(d.fileno(), FICLONERANGE, rng)
        with open(src, "r+b") as f:     # the source's extent split around a new write
            f.seek(size // 2 // 4096 * 4096)
            f.write(rnd.randbytes(4096))
    for i in range(10):
        p = os.path.join(r, "prealloc%d" % i)
        with open(p, "wb") as f:
            os.posix_fallocate(f.fileno(), 0, 1 << 20)
            f.seek(rnd.choice((0, 4096, 12288)))
            f.write(rnd.randbytes(5000))
    z = os.path.join(root, "z", "c00")
    with open(z, "rb") as s, open(os.path.join(r, "zclone"), "wb") as d:
        fcntl.ioctl(d.fileno(), FICLONE, s.fileno())
    os.sync()


def truth_of(root):
    """{path: ["f", sha256] | ["l", target] | ["d"]} of everything under root."""
    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = ["l", os.readlink(p)]
            elif os.path.isdir(p):
                out[rel] = ["d"]
            else:
                with open(p, "rb") as f:
                    out[rel] = ["f", hashlib.sha256(f.read()).hexdigest()]
    return out


def make_bases(args):
    os.makedirs(args.dir, exist_ok=True)
    mnt = tempfile.mkdtemp(prefix="campaign-mnt.")
    try:
        for name, opts, quota, snapshots, wide, clones in BASES + (EXTRA_BASES if args.extra else ()):
            img = os.path.join(args.dir, name + ".img")
            if os.path.exists(img + ".truth") or (args.only and name not in args.only.split(",")):
                continue
            with open(img, "wb") as f:
                f.truncate(320 << 20)
            rc, out = run([args.mkfs, "-q", "-f"] + opts + [img])
            if rc:
                raise SystemExit("mkfs of %s: %s" % (name, out))
            rc, out = run(["mount", "-o", "loop", img, mnt])
            if rc:
                raise SystemExit("mount of %s: %s" % (name, out))
            try:
                if quota:
                    run([args.btrfs, "quota", "enable", mnt])
                populate(mnt, random.Random(name), args.btrfs)
                wide_dir(mnt, random.Random(name), wide)
                if clones:
                    reflinks(mnt, random.Random(name))
                snapshot_rounds(mnt, random.Random(name), args.btrfs, snapshots)
                truth = truth_of(mnt)
            finally:
                run(["umount", mnt])
            with open(img + ".truth", "w") as f:
                json.dump(truth, f)
            print("base %s: %d entries" % (name, len(truth)))
    finally:
        os.rmdir(mnt)


# ---- damage ----------------------------------------------------------------------------

def tree_blocks(fs):
    """[(tree id, logical, level)] of every readable tree block reachable from the
    superblock's roots."""
    roots = [(1, fs.super_get("root")), (3, fs.super_get("chunk_root"))]
    for leaf, slot in fs.walk(fs.super_get("root")):
        k = leaf.key(slot)
        if k[1] == 132:
            roots.append((k[0], struct.unpack_from("<Q", leaf.data(slot), 176)[0]))
    out, seen = [], set()
    for tree, bytenr in roots:
        todo = [bytenr]
        while todo:
            b = todo.pop()
            if b in seen:
                continue
            seen.add(b)
            try:
                blk = fs.read_block(b)
            except (SystemExit, struct.error, OSError):
                continue
            if struct.unpack_from("<Q", blk.b, 48)[0] != b or blk.nritems > fs.nodesize // bi.ITEM:
                continue
            out.append((tree, b, blk.level))
            if blk.level:
                todo.extend(blk.child(s) for s in range(blk.nritems))
    return out


def tree_name(tree):
    return TREE_NAMES.get(tree, "subvol" if tree >= 256 else str(tree))


def later_transaction(img, rnd):
    """A transaction of changes through the kernel (files added, a directory removed);
    returns a copy of img as it was before it (None when it cannot be mounted)."""
    before = img + ".before"
    copy(img, before)
    mnt = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(img)))
    try:
        if run(["mount", "-o", "loop", "-t", "btrfs", img, mnt])[0]:
            os.unlink(before)
            return None
        try:
            os.makedirs(os.path.join(mnt, "later"))
            for i in range(rnd.randint(1, 40)):
                with open(os.path.join(mnt, "later", "n%d" % i), "wb") as f:
                    f.write(rnd.randbytes(rnd.choice((100, 5000, 70000))))
            gone = rnd.choice(sorted(d for d in os.listdir(mnt) if d.startswith("d")))
            shutil.rmtree(os.path.join(mnt, gone))
        finally:
            run(["umount", mnt])
    finally:
        os.rmdir(mnt)
    return before


def lost_writes(img, rnd):
    """Some tree blocks of a later transaction lost (tests/lost_write.py)."""
    before = later_transaction(img, rnd)
    if not before:
        return None
    mode = rnd.choice(lw.MODES)
    try:
        what = lw.lose(before, img, mode, rnd)
    finally:
        os.unlink(before)
    # (the table groups by the word before " tree block")
    return what and "lost writes, mode-%s tree blocks: %s" % (mode, what)


def leaf_items(fs, trees=None):
    """[(tree id, key)] of every item in the leaves of the trees (all when None)."""
    out = []
    for tree, logical, level in tree_blocks(fs):
        if level == 0 and (trees is None or tree_name(tree) in trees):
            blk = fs.read_block(logical)
            out.extend((tree, blk.key(s)) for s in range(blk.nritems))
    return out


def corrupt_block(img, rnd, tool, trees=None):
    """One damage made by btrfs-corrupt-block (tool), as the reference's tests make them."""
    fs = bi.Fs(img)
    items = leaf_items(fs, trees)
    if not items:
        return None
    keystr = lambda k: "%d,%d,%d" % k
    of = lambda tree, typ: [k for t, k in items if t == tree and k[1] == typ]
    ops = []
    inodes = [k for k in of(5, 1) if k[0] >= 256]
    if inodes:
        k = rnd.choice(inodes)
        ops.append(["-i", str(k[0]), "-f", rnd.choice(("isize", "nbytes", "nlink", "generation", "transid",
                                                       "block_group", "mode", "uid", "gid"))])
    extents = of(5, 108)
    if extents:
        k = rnd.choice(extents)
        ops.append(["-i", str(k[0]), "-x", str(k[2]), "-f", rnd.choice(("disk_bytenr", "type"))])
    names = [(t, k) for t, k in items if k[1] in (84, 96) and (t == 5 or t >= 256)]
    if names:
        t, k = rnd.choice(names)
        ops.append(["-D", keystr(k), "-r", str(t), "-f", rnd.choice(("name", "location_objectid"))])
    t, k = rnd.choice(items)
    ops.append(["-K", keystr(k), "-r", str(t), "-f", rnd.choice(("objectid", "type", "offset"))])
    t, k = rnd.choice(items)
    ops.append(["-I", keystr(k), "-r", str(t), "-f", "offset"])
    t, k = rnd.choice(items)
    ops.append(["-d", "-K", keystr(k), "-r", str(t)])
    groups = [k for t, k in items if k[1] == 192]
    if groups:
        ops.append(["--block-group", str(rnd.choice(groups)[0]), "-f", rnd.choice(("used", "flags", "chunk_objectid"))])
    records = [k for t, k in items if t == 2 and k[1] in (168, 169)]
    if records:
        ops.append(["-e", "-l", str(rnd.choice(records)[0])])
    sums = [k for t, k in items if t == 7 and k[1] == 128]
    if sums:
        ops.append(["-C", str(rnd.choice(sums)[2])])
    blocks = [b for b in tree_blocks(fs) if trees is None or tree_name(b[0]) in trees]
    tree, logical, _ = rnd.choice(blocks)
    ops.append(["-m", str(logical), "-f", rnd.choice(("generation", "shift_items"))])
    ops.append(["-k", "-l", str(logical)])
    # (not -u: 6.19's chunk record damage stops on a BUG_ON of its own commit)
    if trees is None or "extent" in trees:
        ops.append(["-E"])
    op = rnd.choice(ops)
    rc, out = run([tool] + op + [img])
    if rc:
        return None
    tree = int(op[op.index("-r") + 1]) if "-r" in op else {"-i": 5, "-m": tree, "-k": tree, "-C": 7}.get(op[0], 2)
    # (the table groups by the word before " tree block")
    return "btrfs-corrupt-block %s: %s tree block" % (" ".join(op), tree_name(tree))


def damage(img, cls, rnd, trees=None, corrupt_tool=None):
    """Applies one damage of class cls; returns what was done, or None when no target."""
    if cls == "lostwrite":
        return lost_writes(img, rnd)
    if cls == "corrupt":
        return corrupt_block(img, rnd, corrupt_tool, trees)
    fs = bi.Fs(img)
    blocks = [b for b in tree_blocks(fs) if trees is None or tree_name(b[0]) in trees]
    if cls != "zero":
        blocks = [b for b in blocks if b[2] == 0 and fs.read_block(b[1]).nritems]
    if not blocks:
        return None
    # a tree first (each as likely: the small ones matter as much), then one of its blocks
    tree = rnd.choice(sorted({tree_name(b[0]) for b in blocks}))
    tree, logical, level = rnd.choice([b for b in blocks if tree_name(b[0]) == tree])
    blk = fs.read_block(logical)
    where = "%s tree block %d (level %d)" % (tree_name(tree), logical, level)
    if cls == "zero":
        blk.b[:] = bytes(len(blk.b))
        fs.write_block(blk, fix_csum=False)
        return "zeroed " + where
    slot = rnd.randrange(blk.nritems)
    key = blk.key(slot)
    if cls == "bitflip":
        off, size = blk.item(slot)
        lo, hi = (bi.HEADER + slot * bi.ITEM, bi.HEADER + (slot + 1) * bi.ITEM) if rnd.random() < 0.3 \
            else (off, off + max(size, 1))
        flips = []
        for _ in range(rnd.randint(1, 3)):
            at = rnd.randrange(lo, min(hi, len(blk.b)))
            bit = rnd.randrange(8)
            blk.b[at] ^= 1 << bit
            flips.append("%d.%d" % (at, bit))
        fs.write_block(blk)
        return "bits %s flipped in item %s of %s" % (",".join(flips), key, where)
    if cls == "delete":
        blk.delete(slot)
        fs.write_block(blk)
        if slot == 0 and blk.nritems:
            blk.path = leaf_path(fs, tree, logical)
            if blk.path is not None:
                fs.fix_parent_keys(blk)
        return "deleted item %s of %s" % (key, where)
    # field: an item field, or the key itself
    data = blk.data(slot)
    layout = bi.LAYOUTS.get(key[1])
    choices = []
    if isinstance(layout, dict):
        choices = [(n, o, f) for n, (o, f) in layout.items() if o + struct.calcsize(f) <= len(data)
                   and not f.endswith("s")]
    elif isinstance(layout, tuple) and data:
        choices = [(n, o, f) for n, (o, f) in layout[0].items() if o + struct.calcsize(f) <= len(data)]
    if not choices or rnd.random() < 0.25:
        part = rnd.choice(("objectid", "type", "offset"))
        new = list(key)
        idx = ("objectid", "type", "offset").index(part)
        new[idx] = field_value(rnd, key[idx], 1 if part == "type" else 8)
        blk.set_key(slot, tuple(new))
        fs.write_block(blk)
        return "key %s of item %d set to %s in %s" % (key, slot, tuple(new), where)
    name, off, fmt = rnd.choice(choices)
    size = struct.calcsize(fmt)
    old = struct.unpack_from(fmt, data, off)[0]
    new = field_value(rnd, old, size)
    ioff, _ = blk.item(slot)
    struct.pack_into(fmt, blk.b, ioff + off, new)
    fs.write_block(blk)
    return "field %s of item %s set %d -> %d in %s" % (name, key, old, new, where)


def field_value(rnd, old, size):
    top = (1 << (8 * size)) - 1
    return rnd.choice((0, 1, (old + 1) & top, (old - 1) & top, top, rnd.randint(0, top),
                       old ^ (1 << rnd.randrange(8 * size))))


def leaf_path(fs, tree, logical):
    """The (node, slot) path from the tree's root to the block logical, or None."""
    root = fs.super_get("root") if tree == 1 else fs.super_get("chunk_root") if tree == 3 else None
    if root is None:
        for leaf, slot in fs.walk(fs.super_get("root")):
            k = leaf.key(slot)
            if k[0] == tree and k[1] == 132:
                root = struct.unpack_from("<Q", leaf.data(slot), 176)[0]
    if root is None:
        return None

    def search(b, path):
        blk = fs.read_block(b)
        if b == logical:
            return path
        if blk.level == 0:
            return None
        for s in range(blk.nritems):
            r = search(blk.child(s), path + [(blk, s)])
            if r is not None:
                return r
        return None
    try:
        return search(root, [])
    except (SystemExit, struct.error, OSError, RecursionError):
        return None


# ---- judging ---------------------------------------------------------------------------

def file_sha(path, limit=64 << 20):
    """sha256 of a file's content, read a piece at a time; None past limit bytes (a size
    damaged into exabytes is no base file)."""
    h, left = hashlib.sha256(), limit
    with open(path, "rb") as f:
        while left >= 0:
            piece = f.read(1 << 20)
            if not piece:
                return h.hexdigest()
            h.update(piece)
            left -= len(piece)
    return None


def files_right(truth, root):
    """How many regular files of truth are at their path under root with their content."""
    n = 0
    for rel, t in truth.items():
        if t[0] != "f":
            continue
        p = os.path.join(root, rel)
        try:
            if os.path.isfile(p) and not os.path.islink(p) and file_sha(p) == t[1]:
                n += 1
        except OSError:
            pass
    return n


def kernel_files(img, truth, mnt):
    """(mounted, files right, files wrong or unreadable) of a read-only kernel mount."""
    rc, _ = run(["mount", "-o", "loop,ro", "-t", "btrfs", img, mnt], timeout=120)
    if rc:
        return False, 0, 0
    try:
        right = files_right(truth, mnt)
        wrong = 0
        for d, _, files in os.walk(mnt):
            for n in files:
                p = os.path.join(d, n)
                rel = os.path.relpath(p, mnt)
                if os.path.islink(p):
                    continue
                try:
                    h = file_sha(p)
                except OSError:
                    wrong += 1
                    continue
                t = truth.get(rel)
                if t and t[0] == "f" and t[1] != h:
                    wrong += 1
        return True, right, wrong
    finally:
        run(["umount", mnt], timeout=120)


def restore_files(box, img, truth, work):
    out = os.path.join(work, "restored")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    run([box, "btrfs", "restore", "-s", "-i", img, out], timeout=600)
    n = files_right(truth, out)
    shutil.rmtree(out, ignore_errors=True)
    return n


def recoverable(box, img, truth, work, mnt):
    mounted, right, _ = kernel_files(img, truth, mnt)
    return max(right, restore_files(box, img, truth, work))


def rw_ok(img, judge, mnt):
    """The kernel mounts it read-write, writes a file, and the judge's check passes after."""
    rc, _ = run(["mount", "-o", "loop", "-t", "btrfs", img, mnt], timeout=120)
    if rc:
        return False
    try:
        with open(os.path.join(mnt, "campaign-write-test"), "wb") as f:
            f.write(os.urandom(1 << 20))
        os.sync()
    except OSError:
        pass
    finally:
        if run(["umount", mnt], timeout=120)[0]:
            return False
    return run([judge, "check", img])[0] == 0


def crashed(rc, out):
    return rc == 124 or rc < 0 or rc >= 128 or "AddressSanitizer" in out or "runtime error:" in out \
        or "Segmentation fault" in out or "Aborted" in out


def sequence(tool, img, judge, log):
    """Runs the repair sequence; returns (crashed step or None, clean after the first
    repair, clean at the end, steps run)."""
    steps = [["check", "--repair", "--force"], ["check", "--repair", "--force"],
             ["check", "--repair", "--force", "--init-extent-tree"],
             ["check", "--repair", "--force", "--init-csum-tree"]]
    first_clean, crash = False, None
    tmp = os.path.dirname(img)
    for i, step in enumerate(steps):
        env = dict(os.environ, TMPDIR=tmp)
        rc, out = run(tool + step + [img], env=env)
        log.write("$ %s %s\n%s\n[exit %d]\n" % (os.path.basename(tool[0]), " ".join(step), out[-6000:], rc))
        if crashed(rc, out):
            crash = " ".join(step)
            break
        jrc, jout = run([judge, "check", img])
        if i == 0:
            first_clean = jrc == 0
        if jrc == 0:
            return None, first_clean, True, i + 1
    return crash, first_clean, False, len(steps)


def trial(args, n, rnd, bases, mnt, log):
    base = rnd.choice(bases)
    truth = json.load(open(base + ".truth"))
    cls = rnd.choice(args.classes)
    img0 = os.path.join(args.work, "damaged.img")
    desc = None
    for _ in range(20):
        copy(base, img0)
        desc = damage(img0, cls, rnd, args.trees, args.corrupt_block)
        if desc:
            break
    if not desc:
        return None
    before = recoverable(args.box, img0, truth, args.work, mnt)
    judge_rc, _ = run([args.judge, "check", img0])
    res = {"n": n, "base": os.path.basename(base), "class": cls, "damage": desc,
           "damaged": judge_rc != 0, "before": before, "files": sum(t[0] == "f" for t in truth.values())}
    for name, tool in args.tools:
        img = os.path.join(args.work, name + ".img")
        copy(img0, img)
        log.write("\n### trial %d %s %s: %s\n" % (n, name, res["base"], desc))
        t0 = time.time()
        crash, first, clean, steps = sequence(tool, img, args.judge, log)
        mounted, right, wrong = kernel_files(img, truth, mnt)
        after = max(right, restore_files(args.box, img, truth, args.work))
        res[name] = {"crash": crash, "first": first, "clean": clean, "steps": steps,
                     "mounted": mounted, "right": right, "wrong": wrong, "after": after,
                     "worse": after < before, "secs": round(time.time() - t0, 1),
                     "rw": clean and mounted and rw_ok(img, args.judge, mnt)}
        os.unlink(img)
        for f in os.listdir(args.work):     # the undo files the repairs left
            if f.endswith(".undo"):
                os.unlink(os.path.join(args.work, f))
    if args.keep:
        os.rename(img0, os.path.join(args.work, "trial%d.img" % n))
    else:
        os.unlink(img0)
    return res


def table(results, tools):
    rows = [("repair steps that crashed or hung", lambda r: r["crash"] is not None),
            ("trials made worse (fewer files recoverable)", lambda r: r["worse"]),
            ("clean after the first --repair", lambda r: r["first"]),
            ("clean after the whole sequence", lambda r: r["clean"]),
            ("clean, mounted, every file right", lambda r: r["clean"] and r["mounted"] and not r["wrong"]),
            ("clean, and a read-write mount stays clean", lambda r: r["rw"])]
    damaged = [r for r in results if r["damaged"]]
    print("\n%d trials (%d that the judge's check finds damaged)" % (len(results), len(damaged)))
    print("| | " + " | ".join(t for t, _ in tools) + " |")
    print("|---|" + "---|" * len(tools))
    for label, f in rows:
        print("| %s | %s |" % (label, " | ".join(str(sum(1 for r in damaged if f(r[t]))) for t, _ in tools)))
    print("\nper damage class and tree: trials, clean after the sequence, files after/before")
    groups = {}
    for r in damaged:
        tree = r["damage"].split(" tree block")[0].split()[-1]
        groups.setdefault("%s %s" % (r["class"], tree), []).append(r)
    for g in sorted(groups):
        rs = groups[g]
        cells = []
        for t, _ in tools:
            cells.append("%s %d/%d files %d/%d" % (t, sum(r[t]["clean"] for r in rs), len(rs),
                                                   sum(r[t]["after"] for r in rs), sum(r["before"] for r in rs)))
        print("  %-22s %s" % (g, "   ".join(cells)))


def run_campaign(args):
    args.classes = args.classes.split(",")
    if "corrupt" in args.classes and not args.corrupt_block:
        raise SystemExit("the corrupt class needs --corrupt-block")
    args.trees = set(args.trees.split(",")) if args.trees else None
    args.tools = [("btrfsbox", [os.path.abspath(args.box), "btrfs"])]
    if args.ref:
        args.tools.append(("reference", [args.ref]))
    bases = sorted(os.path.join(args.bases, f[:-6]) for f in os.listdir(args.bases) if f.endswith(".truth"))
    if not bases:
        raise SystemExit("no base images in %s (repair_campaign.py bases DIR)" % args.bases)
    os.makedirs(args.work, exist_ok=True)
    mnt = tempfile.mkdtemp(prefix="campaign-mnt.")
    results = []
    log = open(args.log or os.path.join(args.work, "campaign.log"), "w")
    try:
        for n in args.only or range(args.n):
            rnd = random.Random("%s-%d" % (args.seed, n))
            r = trial(args, n, rnd, bases, mnt, log)
            if r is None:
                continue
            results.append(r)
            box = r["btrfsbox"]
            print("trial %3d %-7s %-7s %s: box %s%s%s files %d/%d/%d%s" % (
                n, r["base"][:7], r["class"], "damaged" if r["damaged"] else "harmless",
                "clean" if box["clean"] else "NOT CLEAN",
                " CRASH(%s)" % box["crash"] if box["crash"] else "", " WORSE" if box["worse"] else "",
                box["after"], r["before"], r["files"],
                "" if len(args.tools) < 2 else "  ref %s%s%s" % (
                    "clean" if r["reference"]["clean"] else "NOT CLEAN",
                    " CRASH" if r["reference"]["crash"] else "", " WORSE" if r["reference"]["worse"] else "")),
                flush=True)
            print("      %s" % r["damage"], flush=True)
            log.flush()
            with open(os.path.join(args.work, "results.json"), "w") as f:
                json.dump(results, f, indent=1)
    finally:
        os.rmdir(mnt)
        with open(os.path.join(args.work, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
    table(results, args.tools)
    # damage the judge does not see is not the repair's to mend (the kernel may still
    # refuse it: it is listed, not failed)
    for r in results:
        if not r["damaged"] and not r["btrfsbox"]["mounted"]:
            print("note: trial %d: %s: the judge's check passes, the kernel refuses it" % (r["n"], r["damage"]))
    bad = [r for r in results if r["btrfsbox"]["crash"] or r["btrfsbox"]["worse"] or
           (r["damaged"] and r["btrfsbox"]["clean"] and not r["btrfsbox"]["mounted"])]
    for r in bad:
        print("FAILED trial %d: %s (%s)" % (r["n"], r["damage"], r["btrfsbox"]))
    return 1 if bad else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bases")
    b.add_argument("dir")
    b.add_argument("--mkfs", default=shutil.which("mkfs.btrfs") or "mkfs.btrfs")
    b.add_argument("--btrfs", default=shutil.which("btrfs") or "btrfs")
    b.add_argument("--only", help="these bases only (NAME,...)")
    b.add_argument("--extra", action="store_true", help="the other layouts too (EXTRA_BASES)")
    d = sub.add_parser("damage")
    d.add_argument("image")
    d.add_argument("cls", choices=CLASSES)
    d.add_argument("--tree")
    d.add_argument("--seed", default="1")
    f = sub.add_parser("files")
    f.add_argument("image")
    f.add_argument("truth")
    r = sub.add_parser("run")
    r.add_argument("--box", required=True)
    r.add_argument("--bases", required=True)
    r.add_argument("--work", required=True)
    r.add_argument("-n", type=int, default=20)
    r.add_argument("--seed", default="1")
    r.add_argument("--ref")
    r.add_argument("--judge", default=shutil.which("btrfs") or "btrfs")
    r.add_argument("--classes", default=",".join(CLASSES))
    r.add_argument("--corrupt-block", help="btrfs-corrupt-block, for the corrupt class")
    r.add_argument("--trees")
    r.add_argument("--log")
    r.add_argument("--keep", action="store_true", help="keep each damaged image as WORK/trialN.img")
    r.add_argument("--only", type=lambda v: [int(x) for x in v.split(",")], help="run trials N,... only")
    args = p.parse_args()
    if args.cmd == "bases":
        make_bases(args)
        return 0
    if args.cmd == "damage":
        desc = damage(args.image, args.cls, random.Random(args.seed), {args.tree} if args.tree else None)
        print(desc or "nothing to damage")
        return 0 if desc else 1
    if args.cmd == "files":
        mnt = tempfile.mkdtemp(prefix="campaign-mnt.")
        try:
            mounted, right, wrong = kernel_files(args.image, json.load(open(args.truth)), mnt)
        finally:
            os.rmdir(mnt)
        print("%s %d right %d wrong" % ("mounted" if mounted else "refused", right, wrong))
        return 0 if mounted else 1
    return run_campaign(args)


if __name__ == "__main__":
    sys.exit(main())
