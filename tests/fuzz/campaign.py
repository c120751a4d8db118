#!/usr/bin/env python3
"""Mutation campaign over whole images: damage tree blocks, items and superblocks of
clean and corpus images, fix the checksums (so the damage reaches the parsers), and run
every read-only command of btrfsbox on each mutant under a timeout. A crash, a sanitizer
report, a hang, a heap past the limit, a write to the image by a read-only command or a
write outside restore's target is a finding.

usage: campaign.py bases DIR                 make the clean base images (root, kernel)
       campaign.py run --box BIN --out DIR [-n N] [--seed S] [--timeout T] IMAGE|DIR...
       campaign.py run ... --as-is IMAGE|DIR...   each image once, unchanged
       campaign.py run ... --writers ...      also check --repair and btrfs rescue, each on
                                              a copy of the mutant (--only NAME,... picks)
       campaign.py mutate IMAGE SEED          apply the mutation of SEED to IMAGE (a copy!)
       campaign.py streams --box BIN --out DIR [-n N] [--seed S] STREAM|DIR...
                                              the same for send streams: receive --dump,
                                              and receive into a scratch btrfs (root, loop)
       campaign.py mutate-stream STREAM SEED [STREAM|DIR...]   mutate a stream file in
                                              place (donors: the campaign's streams)
Stream findings keep the mutant beside their log (OUT/logs/SEED-CMD.log.stream).
Images: FILE.img (FILE.img2 beside it: the second device); a DIR adds its *.img and *.raw.
Findings go to OUT/findings.tsv (seed, image, command, what) with the output in OUT/logs;
`mutate` on a copy of the image reproduces one. Needs the sanitizer binary for reports
(make sanitize builds build/sanitize/btrfsbox)."""
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import btrfs_image as bi  # noqa: E402

HEADER, ITEM, KEY_PTR = bi.HEADER, bi.ITEM, bi.KEY_PTR
MAX_BLOCKS = 4000


class Target:
    """An image (one or more device files) with every tree block found from its roots."""

    def __init__(self, paths):
        self.paths = paths
        self.devs = [bi.Fs(p) for p in paths]
        fs = self.devs[0]
        self.fs, self.nodesize = fs, fs.nodesize
        self.blocks = {}        # logical -> level
        self.leaves = []
        todo = [fs.super_get("chunk_root"), fs.super_get("root")]
        if fs.super_get("log_root"):
            todo.append(fs.super_get("log_root"))
        while todo and len(self.blocks) < MAX_BLOCKS:
            self._visit(todo.pop(), todo)

    def read(self, logical):
        try:
            leaf = self.fs.read_block(logical)
        except (SystemExit, struct.error, OSError):
            return None
        if len(leaf.b) != self.nodesize or struct.unpack_from("<Q", leaf.b, 48)[0] != logical:
            return None
        return leaf

    def _visit(self, logical, todo):
        if logical in self.blocks:
            return
        leaf = self.read(logical)
        if leaf is None or leaf.nritems > self.nodesize // ITEM:
            return
        self.blocks[logical] = leaf.level
        if leaf.level:
            todo.extend(leaf.child(s) for s in range(min(leaf.nritems, self.nodesize // KEY_PTR)))
            return
        self.leaves.append(logical)
        for slot in range(leaf.nritems):
            try:
                key, data = leaf.key(slot), leaf.data(slot)
            except struct.error:
                break
            if key[1] == 132 and len(data) >= 184:      # ROOT_ITEM: its tree
                todo.append(struct.unpack_from("<Q", data, 176)[0])

    def write_block(self, leaf):
        for fs in self.devs:
            try:
                fs.write_block(bi.Leaf(fs, leaf.logical, leaf.b))
            except SystemExit:
                pass

    def write_super(self, sb, copies=None):
        for fs in self.devs:
            fs.sb[:] = sb
            if fs is not self.fs:   # each device keeps its own dev_item
                fs.sb[201:201 + 98] = self.fs_dev_items[fs.path]
            fs.write_super(copies)

    def data_extents(self):
        """(disk_bytenr, disk_num_bytes, compression) of regular file extents."""
        out = []
        for logical in self.leaves:
            leaf = self.read(logical)
            if leaf is None:
                continue
            for slot in range(leaf.nritems):
                try:
                    key, data = leaf.key(slot), leaf.data(slot)
                except struct.error:
                    break
                if key[1] == 108 and len(data) >= 53 and data[20] in (1, 2):
                    bytenr, num = struct.unpack_from("<QQ", data, 21)
                    if bytenr:
                        out.append((bytenr, num, data[16]))
        return out


def interesting(rng, old, width, near=()):
    """A value likely to hit an edge: 0, 1, all ones, sign bits, powers of two,
    the old value +-1 or +-small, a size from the image, or random."""
    top = (1 << (8 * width)) - 1
    choices = [0, 1, 2, top, top >> 1, (top >> 1) + 1, old + 1, old - 1,
               old + rng.choice((8, 16, 4096, 65536)), old - rng.choice((8, 16, 4096)),
               1 << rng.randrange(8 * width), rng.randrange(top + 1), old ^ (1 << rng.randrange(8 * width))]
    choices += list(near)
    return rng.choice(choices) & top


def mutate_bytes(rng, buf, start, end):
    """Random damage in buf[start:end]: a byte, a bit, a run, or an integer field."""
    if end <= start:
        return "empty"
    kind = rng.randrange(4)
    pos = rng.randrange(start, end)
    if kind == 0:
        buf[pos] = rng.randrange(256)
        return "byte@%d" % (pos - start)
    if kind == 1:
        buf[pos] ^= 1 << rng.randrange(8)
        return "bit@%d" % (pos - start)
    if kind == 2:
        n = min(end - pos, rng.choice((2, 4, 8, 16, 64)))
        fill = rng.choice((0, 0xff, None))
        buf[pos:pos + n] = bytes(rng.randrange(256) if fill is None else fill for _ in range(n))
        return "run%d@%d" % (n, pos - start)
    width = rng.choice((1, 2, 4, 8))
    if pos + width > end:
        pos = max(start, end - width)
    if pos + width > end:
        return "short"
    fmt = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}[width]
    old = struct.unpack_from(fmt, buf, pos)[0]
    struct.pack_into(fmt, buf, pos, interesting(rng, old, width, (end - start, 4096, 16384)))
    return "int%d@%d" % (width, pos - start)


def mutate_field(rng, buf, base, layout, size, near=()):
    """An integer field of an item layout (bi.LAYOUTS) set to an edge value."""
    names = [n for n, (o, f) in layout.items() if not f.endswith("s") and o + struct.calcsize(f) <= size]
    if not names:
        return None
    name = rng.choice(names)
    off, fmt = layout[name]
    old = struct.unpack_from(fmt, buf, base + off)[0]
    struct.pack_into(fmt, buf, base + off, interesting(rng, old, struct.calcsize(fmt), near))
    return name


def mutate_item(rng, t, leaf):
    """Damage one item of a leaf: its key, its offset/size, or its payload."""
    n = leaf.nritems
    if n == 0:
        return None
    slot = rng.randrange(n)
    base = HEADER + slot * ITEM
    key = leaf.key(slot)
    off, size = struct.unpack_from("<II", leaf.b, base + 17)
    what = rng.randrange(10)
    if what == 0:       # key
        part = rng.randrange(3)
        if part == 1:
            new = rng.choice(list(bi.KEY_TYPES.values()) + [0, 255, rng.randrange(256)])
            struct.pack_into("<B", leaf.b, base + 8, new)
        else:
            at = base + (0 if part == 0 else 9)
            old = struct.unpack_from("<Q", leaf.b, at)[0]
            struct.pack_into("<Q", leaf.b, at, interesting(rng, old, 8, (256, 257, 5, 2 ** 64 - 9)))
        return "key%d slot %d %s" % (part, slot, key)
    if what == 1:       # offset / size
        field = rng.randrange(2)
        old = (off, size)[field]
        struct.pack_into("<I", leaf.b, base + 17 + 4 * field,
                         interesting(rng, old, 4, (t.nodesize, t.nodesize - HEADER, size + off)))
        return "%s slot %d %s" % (("itemoff", "itemsize")[field], slot, key)
    data_start = HEADER + off
    if data_start + size > len(leaf.b):
        return None
    layout = bi.LAYOUTS.get(key[1])
    if what < 6 and layout is not None:    # a named field (of an entry for name items)
        data = bytes(leaf.b[data_start:data_start + size])
        if isinstance(layout, tuple):
            ents = bi.entries(data, layout)
            if not ents:
                return None
            estart, elen = rng.choice(ents)
            name = mutate_field(rng, leaf.b, data_start + estart, layout[0], size - estart,
                                (elen, size, 255, 256))
        else:
            name = mutate_field(rng, leaf.b, data_start, layout, size, (size, t.nodesize))
        if name:
            return "field %s slot %d %s" % (name, slot, key)
    what = mutate_bytes(rng, leaf.b, data_start, data_start + size)
    return "payload %s slot %d %s" % (what, slot, key)


def mutate_node(rng, t, node):
    n = node.nritems
    if n == 0:
        return None
    slot = rng.randrange(n)
    base = HEADER + slot * KEY_PTR
    part = rng.randrange(5)
    if part == 3:       # blockptr: another block, a neighbour, or garbage
        others = list(t.blocks)
        old = node.child(slot)
        new = rng.choice([rng.choice(others), old + t.nodesize, old - t.nodesize, old + 1, 0,
                          interesting(rng, old, 8), rng.choice(others)])
        struct.pack_into("<Q", node.b, base + 17, new)
        return "blockptr slot %d" % slot
    if part == 4:       # generation
        old = struct.unpack_from("<Q", node.b, base + 25)[0]
        struct.pack_into("<Q", node.b, base + 25, interesting(rng, old, 8))
        return "ptrgen slot %d" % slot
    if part == 1:
        node.b[base + 8] = rng.choice(list(bi.KEY_TYPES.values()) + [0, 255])
    else:
        at = base + (0 if part == 0 else 9)
        old = struct.unpack_from("<Q", node.b, at)[0]
        struct.pack_into("<Q", node.b, at, interesting(rng, old, 8))
    return "ptrkey%d slot %d" % (part, slot)


def mutate_header(rng, t, blk):
    name = rng.choice(("nritems", "nritems", "level", "level", "owner", "generation",
                       "bytenr", "flags"))
    off, fmt = bi.HEADER_FIELDS[name]
    old = struct.unpack_from(fmt, blk.b, off)[0]
    if name == "level":
        new = rng.choice((0, 1, 2, 7, 8, 255, old + 1, old - 1)) & 0xff
    elif name == "bytenr":
        new = rng.choice(list(t.blocks) + [old + 1, 0])
    else:
        new = interesting(rng, old, struct.calcsize(fmt), (old * 2, t.nodesize // ITEM))
    struct.pack_into(fmt, blk.b, off, new)
    return "header %s %d->%d" % (name, old, new)


def mutate_structure(rng, t, leaf):
    """Whole items: swap two, duplicate one (a copy of its data), delete one."""
    n = leaf.nritems
    if n < 2:
        return None
    a, b = rng.sample(range(n), 2)
    op = rng.randrange(3)
    if op == 0:
        ka, kb = leaf.key(a), leaf.key(b)
        leaf.set_key(a, kb)
        leaf.set_key(b, ka)
        return "swap keys %d %d" % (a, b)
    if op == 1:
        try:
            leaf.insert(a + 1, leaf.key(a), leaf.data(a))
        except SystemExit:
            return None
        return "dup item %d" % a
    leaf.delete(a)
    return "delete item %d" % a


SUPER_INTS = [n for n, (o, f) in bi.SUPER_FIELDS.items() if not f.endswith("s") and n != "magic"]


def mutate_super(rng, t):
    sb = bytearray(t.fs.sb)
    what = rng.randrange(6)
    if what == 0:       # the system chunk array
        size = struct.unpack_from("<I", sb, 160)[0]
        if rng.randrange(3) == 0:
            struct.pack_into("<I", sb, 160, interesting(rng, size, 4, (2048, 2049, 17, 97, 129)))
            desc = "sys_chunk_array_size"
        else:
            desc = "sys_chunk_array " + mutate_bytes(rng, sb, 811, 811 + max(size, 1))
    elif what == 1:     # backup roots: 4 x 168 bytes at 2859
        desc = "backup_roots " + mutate_bytes(rng, sb, 2859, 2859 + 4 * 168)
    elif what == 2:
        name = rng.choice(("root", "chunk_root", "log_root", "root_level", "chunk_root_level",
                           "log_root_level"))
        off, fmt = bi.SUPER_FIELDS[name]
        old = struct.unpack_from(fmt, sb, off)[0]
        new = rng.choice(list(t.blocks) + [interesting(rng, old, struct.calcsize(fmt))])
        if fmt == "<B":
            new = rng.choice((0, 1, 2, 8, 255, old + 1))
        struct.pack_into(fmt, sb, off, new & ((1 << (8 * struct.calcsize(fmt))) - 1))
        desc = "super %s" % name
    else:
        name = rng.choice(SUPER_INTS)
        off, fmt = bi.SUPER_FIELDS[name]
        old = struct.unpack_from(fmt, sb, off)[0]
        struct.pack_into(fmt, sb, off, interesting(rng, old, struct.calcsize(fmt),
                                                   (4096, 16384, 65536, 1 << 20, 0x10000000)))
        desc = "super %s" % name
    copies = None if rng.randrange(4) else [0]
    t.write_super(sb, copies)
    return desc + ("" if copies is None else " (primary only)")


def mutate_data(rng, t):
    """Garbage in a (preferably compressed) data extent: the decompressors' input."""
    ext = t.data_extents()
    if not ext:
        return None
    comp = [e for e in ext if e[2]]
    bytenr, num, c = rng.choice(comp if comp and rng.randrange(4) else ext)
    phys = [(fs.path, p) for fs in t.devs for p in fs.mirrors(bytenr)]
    with open(phys[0][0], "rb") as f:
        f.seek(phys[0][1])
        buf = bytearray(f.read(min(num, 4096)))
    what = mutate_bytes(rng, buf, 0, len(buf))
    for path, p in phys:
        with open(path, "r+b") as f:
            f.seek(p)
            f.write(buf)
    return "data %d comp %d %s" % (bytenr, c, what)


def mutate(paths, seed):
    """Applies 1-3 random mutations (seeded) to the image files; returns their text."""
    rng = random.Random(seed)
    t = Target(paths)
    t.fs_dev_items = {fs.path: bytes(fs.sb[201:201 + 98]) for fs in t.devs}
    done = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        kind = rng.choices(("item", "header", "node", "structure", "super", "data"),
                           (45, 10, 15, 10, 12, 8))[0]
        desc = None
        if kind == "super":
            desc = mutate_super(rng, t)
        elif kind == "data":
            desc = mutate_data(rng, t)
        else:
            pool = t.leaves if kind in ("item", "structure") else \
                [b for b, lv in t.blocks.items() if lv] if kind == "node" else list(t.blocks)
            if pool:
                blk = t.read(rng.choice(sorted(pool)))
                if blk is not None:
                    fn = {"item": mutate_item, "header": mutate_header, "node": mutate_node,
                          "structure": mutate_structure}[kind]
                    desc = fn(rng, t, blk)
                    if desc:
                        t.write_block(blk)
                        desc = "%s block %d: %s" % (kind, blk.logical, desc)
        if desc:
            done.append(desc)
    return "; ".join(done) or "nothing"


# ---- running the commands ----

def commands(img, devs, scratch):
    """(name, argv, writes) for every read-only command on the mutant."""
    d = devs
    out = os.path.join(scratch, "jail", "out")
    return [
        ("check", ["btrfs", "check", img], False),
        ("check-csum", ["btrfs", "check", "--check-data-csum", img], False),
        ("check-lowmem", ["btrfs", "check", "--mode=lowmem", img], False),
        ("check-backup", ["btrfs", "check", "-b", img], False),
        ("check-super1", ["btrfs", "check", "-s", "1", img], False),
        ("dump-super", ["btrfs", "inspect-internal", "dump-super", "-fa", img], False),
        ("dump-tree", ["btrfs", "inspect-internal", "dump-tree"] + d, False),
        ("tree-stats", ["btrfs", "inspect-internal", "tree-stats", img], False),
        ("list-dir", ["btrfs", "inspect-internal", "list-dir"] + d, False),
        ("read-file", ["btrfs", "inspect-internal", "read-file", "--inode", "257", "--verify"] + d, False),
        ("read-extents", ["btrfs", "inspect-internal", "read-file", "--inode", "258", "--extents"] + d, False),
        ("walk-trees", ["btrfs", "inspect-internal", "walk-trees"] + d, False),
        ("restore-list", ["btrfs", "restore", "-l"] + d, False),
        ("restore-dry", ["btrfs", "restore", "-D", "-v"] + d + [out], False),
        ("restore", ["btrfs", "restore", "-i", "-S", "-x", "-m", "-s"] + d + [out], "jail"),
        ("send", ["btrfs", "send", "-f", "/dev/null", "--device", img, "/snap"] +
         sum((["--device", x] for x in d[1:]), []), False),
        ("send-inc", ["btrfs", "send", "-f", "/dev/null", "-p", "/snap", "--device", img, "/snap2"] +
         sum((["--device", x] for x in d[1:]), []), False),
        ("scrub", ["btrfs", "scrub", "start", "-B", "-r"] + d, False),
        ("fi-show", ["btrfs", "filesystem", "show", img], False),
        ("label", ["btrfs", "filesystem", "label", img], False),
    ]


def copy_commands():
    """(name, argv) of the commands that write: each runs on its own copy of the mutant,
    C stands for the copy's primary device, U for an undo file; all in scratch, jailed
    there. They may fail, never crash or hang; the copy is checked afterwards, and
    after a repair that exits 0 the check must pass (else: repaired-not-clean)."""
    rescue = [["super-recover", "-y"], ["zero-log"], ["clear-uuid-tree"], ["clear-ino-cache"],
              ["clear-space-cache", "v1"], ["clear-space-cache", "v2"], ["fix-device-size"],
              ["chunk-recover", "-y"]]
    return [("repair", ["btrfs", "check", "--repair", "--force", "--undo", "U", "C"]),
            ("repair-init-csum", ["btrfs", "check", "--repair", "--force", "--init-csum-tree", "--undo", "U", "C"]),
            ("repair-init-extent", ["btrfs", "check", "--repair", "--force", "--init-extent-tree", "--undo", "U", "C"]),
            ("label-set", ["btrfs", "filesystem", "label", "C", "fuzzed"])] + \
        [("rescue-" + "-".join(r), ["btrfs", "rescue"] + r[:1] + ["--undo", "U"] + r[1:] + ["C"]) for r in rescue]


def jailed(argv, jail):
    """argv in a mount namespace where only jail is writable (writes elsewhere: EROFS)."""
    script = ('mount --make-rprivate / && mount --bind "$0" "$0" && '
              'mount -o remount,bind,ro / && exec "$@"')
    return ["unshare", "-m", "sh", "-c", script, jail] + argv


def classify(rc, err, timed_out):
    if timed_out:
        return "hang"
    if "AddressSanitizer" in err and "LeakSanitizer" not in err.split("AddressSanitizer")[0]:
        if "allocation-size-too-big" in err or "malloc limit" in err or "rss-limit" in err \
                or "out of memory" in err or "allocator is out of memory" in err:
            return "memory"
        return "asan"
    if "runtime error:" in err:
        return "ubsan"
    if "LeakSanitizer" in err:
        return "leak"
    if rc < 0 or 128 <= rc < 255:     # 255: exit(-1), as btrfs-progs does for some errors
        return "crash %d" % rc
    if "Read-only file system" in err:
        return "escape"
    return None


def run_one(box, argv, timeout, jail=None):
    env = dict(os.environ, ASAN_OPTIONS="malloc_limit_mb=160:detect_leaks=1:allocator_may_return_null=0",
               UBSAN_OPTIONS="print_stacktrace=1")
    argv = [box] + argv
    if jail:
        argv = jailed(argv, jail)
    t0 = time.time()
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           env=env, stdin=subprocess.DEVNULL)
        rc, out, err, to = p.returncode, p.stdout, p.stderr, False
    except subprocess.TimeoutExpired as e:
        rc, out, err, to = -9, e.stdout or b"", e.stderr or b"", True
    return rc, out.decode(errors="replace")[-4000:], err.decode(errors="replace")[-20000:], to, time.time() - t0


def box_works(box, work):
    """A copy of the binary in work (a rebuild during the campaign does not disturb it).
    The binary dispatches on its name: the copy is called btrfsbox too."""
    if subprocess.run([box, "btrfs", "--version"], stdout=subprocess.DEVNULL).returncode:
        raise SystemExit("%s does not run `btrfs --version` (a copy must be named btrfsbox)" % box)
    copy = os.path.join(work, "btrfsbox")
    shutil.copy(box, copy)
    return copy


def mtimes(paths):
    return [os.stat(p).st_mtime_ns for p in paths]


def copy_image(paths, scratch):
    out = []
    for i, p in enumerate(paths):
        dst = os.path.join(scratch, "m%d.img" % i)
        subprocess.run(["cp", "--sparse=always", p, dst], check=True)
        out.append(dst)
    return out


def image_paths(img):
    second = img + "2"
    return [img, second] if os.path.exists(second) else [img]


def record(out, findings, mutant, name, what, argv, result):
    """A finding: a line in findings.tsv and the output in OUT/logs/SEED-NAME.log.
    mutant: (kind, source file, seed, mutation); result: (rc, stdout, stderr, seconds)."""
    kind, src, mseed, desc = mutant
    rc, o, e, dt = result
    log = os.path.join(out, "logs", "%d-%s.log" % (mseed, name))
    with open(log, "w") as f:
        f.write("%s %s seed %d\nmutation %s\nargv %s\nrc %d time %.1f\n--- stdout\n%s\n--- stderr\n%s\n"
                % (kind, src, mseed, desc, argv, rc, dt, o, e))
    findings.write("%d\t%s\t%s\t%s\t%s\n" % (mseed, os.path.basename(src), name, what, desc))
    findings.flush()
    print("FINDING", mseed, os.path.basename(src), name, what, desc, flush=True)
    return log


def common_options(args, other):
    """--box, --out, -n, --seed, --timeout; other(a) takes any other argument (false: none).
    Returns (box, out, n, seed, timeout)."""
    box, out, n, seed, timeout = None, None, 100, int(time.time()), 60
    while args:
        a = args.pop(0)
        if a == "--box":
            box = os.path.abspath(args.pop(0))
        elif a == "--out":
            out = args.pop(0)
        elif a in ("-n", "--seed", "--timeout"):
            v = int(args.pop(0))
            n, seed, timeout = (v if a == "-n" else n, v if a == "--seed" else seed,
                                v if a == "--timeout" else timeout)
        elif not other(a):
            raise SystemExit(__doc__)
    return box, out, n, seed, timeout


def campaign(args):
    opt = {"only": None, "asis": False, "writers": False}
    images = []

    def other(a):
        if a == "--as-is":
            opt["asis"] = True
        elif a == "--writers":
            opt["writers"] = True
        elif a == "--only":
            opt["only"] = args.pop(0).split(",")
        elif os.path.isdir(a):
            images.extend(sorted(os.path.join(a, f) for f in os.listdir(a) if f.endswith((".img", ".raw"))))
        else:
            images.append(a)
        return True

    box, out, n, seed, timeout = common_options(args, other)
    only, asis, writers = opt["only"], opt["asis"], opt["writers"]
    if not box or not out or not images:
        raise SystemExit(__doc__)
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    box = box_works(box, out)
    findings = open(os.path.join(out, "findings.tsv"), "a")
    stats = {}
    rng = random.Random(seed)
    for i in range(len(images) if asis else n):
        img = images[i] if asis else rng.choice(images)
        mseed = 0 if asis else rng.randrange(1 << 32)
        scratch = tempfile.mkdtemp(prefix="qaf.", dir=os.environ.get("TMPDIR", "/var/tmp"))
        try:
            paths = copy_image(image_paths(img), scratch)
            try:
                desc = mutate(paths, mseed) if mseed else "as is"
            except (SystemExit, struct.error, IndexError, ValueError, OSError) as e:
                desc = "unmutated (%s)" % str(e)[:60]
            os.makedirs(os.path.join(scratch, "jail", "out"))
            before = mtimes(paths)

            def report(name, argv, rc, o, e, to, dt, what=None):
                what = what or classify(rc, e, to)
                if what:
                    record(out, findings, ("image", img, mseed, desc), name, what, argv, (rc, o, e, dt))
            for name, argv, writes in commands(paths[0], paths, scratch):
                if only and name not in only:
                    continue
                rc, o, e, to, dt = run_one(box, argv, timeout, os.path.join(scratch, "jail") if writes else None)
                if classify(rc, e, to) is None and mtimes(paths) != before:
                    before = mtimes(paths)
                    report(name, argv, rc, o, e, to, dt, "wrote-image")
                else:
                    report(name, argv, rc, o, e, to, dt)
                stats[name] = stats.get(name, 0) + 1
            for name, argv in copy_commands() if writers else ():
                if only and name not in only:
                    continue
                copy = os.path.join(scratch, "copy")
                os.makedirs(copy)
                cpaths = copy_image(paths, copy)
                undo = os.path.join(copy, "undo")
                argv = [cpaths[0] if a == "C" else undo if a == "U" else a for a in argv]
                rc, o, e, to, dt = run_one(box, argv, timeout, copy)
                report(name, argv, rc, o, e, to, dt)
                repaired = name.startswith("repair") and rc == 0
                av = ["btrfs", "check", cpaths[0]]
                rc, o, e, to, dt = run_one(box, av, timeout, copy)
                # a repair that exits 0 leaves a filesystem check passes
                report(name + "+check", av, rc, o, e, to, dt,
                       "repaired-not-clean" if repaired and rc == 1 and not classify(rc, e, to) else None)
                if os.path.exists(undo):    # undo puts back exactly the mutant
                    av = ["btrfs", "rescue", "undo", undo] + cpaths
                    rc, o, e, to, dt = run_one(box, av, timeout, copy)
                    same = all(subprocess.run(["cmp", "-s", a, b]).returncode == 0 for a, b in zip(paths, cpaths))
                    report(name + "+undo", av, rc, o, e, to, dt,
                           "undo-failed" if rc else None if same else "undo-not-exact")
                stats[name] = stats.get(name, 0) + 1
                shutil.rmtree(copy)
            print("mutant %d/%d seed %d %s: %s" % (i + 1, n, mseed, os.path.basename(img), desc), flush=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    print("runs per command:", stats, "mutants:", i + 1)


# ---- send streams ----

STREAM_HEADER, CMD_HEADER = 17, 10
EVIL_NAMES = [b"..", b".", b"", b"/", b"a/../../..", b"../x", b"/etc/x", b"n" * 255, b"n" * 256,
              b"d/" * 2000, b"x\0y", b"\n\t\\ \xff"]


PATH_ATTRS = (15, 16, 17, 22)     # path, path_to, path_link, clone_path
SAME_SHAPE = ((3, 4, 6, 7), (11, 12))   # mkfile/mkdir/mkfifo/mksock, unlink/rmdir


def stream_crc(data):
    c = 0
    t = bi.crc32c.table
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c


def split_stream(data):
    """(offset, length) of every command (header included) after the stream header."""
    out, pos = [], STREAM_HEADER
    while pos + CMD_HEADER <= len(data):
        if data[pos:pos + 13] == b"btrfs-stream\0":     # the next stream of the input
            pos += STREAM_HEADER
            continue
        n = struct.unpack_from("<I", data, pos)[0]
        out.append((pos, min(CMD_HEADER + n, len(data) - pos)))
        pos += CMD_HEADER + n
    return out


def tlvs(data, start, end):
    out, pos = [], start
    while pos + 4 <= end:
        t, n = struct.unpack_from("<HH", data, pos)
        out.append((pos, t, min(n, end - pos - 4)))
        pos += 4 + n
    return out


def fix_crc(data, off, length):
    struct.pack_into("<I", data, off + 6, 0)
    struct.pack_into("<I", data, off + 6, stream_crc(bytes(data[off:off + length])))


def mutate_stream(data, seed, donors=()):
    """1-3 mutations of a stream (bytearray); the commands' crcs are fixed (mostly).
    donors: other streams (bytes) whose commands may be spliced in."""
    rng = random.Random(seed)
    done = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        cmds = split_stream(data)
        if not cmds:
            break
        ci = rng.randrange(len(cmds))
        off, length = cmds[ci]
        kind = rng.randrange(10)
        if kind == 0:       # command header: length or type
            if rng.randrange(2):
                old = struct.unpack_from("<I", data, off)[0]
                struct.pack_into("<I", data, off, interesting(rng, old, 4, (16 << 20, (16 << 20) + 1)))
                done.append("cmd %d len" % ci)
            else:
                struct.pack_into("<H", data, off + 4, rng.choice((0, 1, 2, 21, 22, 25, 26, 27, 255,
                                                                  rng.randrange(30))))
                done.append("cmd %d type" % ci)
            continue
        attrs = tlvs(data, off + CMD_HEADER, off + length)
        if kind == 8:       # a command of the same shape: mkfile -> mkdir, unlink -> rmdir
            typ = struct.unpack_from("<H", data, off + 4)[0]
            family = next((f for f in SAME_SHAPE if typ in f), None)
            if family:
                struct.pack_into("<H", data, off + 4, rng.choice(family))
                done.append("cmd %d type %d->%d" % (ci, typ, struct.unpack_from("<H", data, off + 4)[0]))
        elif kind == 9 and attrs:   # a path of another command, or a path below it
            paths = [(a, t, n) for a, t, n in attrs if t in PATH_ATTRS]
            names = [bytes(data[a + 4:a + 4 + n]) for o, ln in cmds
                     for a, t, n in tlvs(data, o + CMD_HEADER, o + ln) if t in PATH_ATTRS]
            if paths and names:
                aoff, typ, alen = rng.choice(paths)
                name = rng.choice(names)
                name = rng.choice((name, name + b"/" + rng.choice(names).split(b"/")[-1],
                                   name.rpartition(b"/")[0]))
                new = struct.pack("<HH", typ, len(name)) + name
                data[aoff:aoff + 4 + alen] = new
                struct.pack_into("<I", data, off, struct.unpack_from("<I", data, off)[0] + len(new) - 4 - alen)
                done.append("cmd %d attr %d path %r" % (ci, typ, name[:40]))
        elif kind in (1, 2, 3, 4) and attrs:
            aoff, typ, alen = rng.choice(attrs)
            if kind == 1:       # TLV header
                part = rng.randrange(2)
                old = struct.unpack_from("<H", data, aoff + 2 * part)[0]
                struct.pack_into("<H", data, aoff + 2 * part,
                                 interesting(rng, old, 2, (alen + 1, alen - 1, 8, 16, 12)))
                done.append("cmd %d attr %d %s" % (ci, typ, ("type", "len")[part]))
            elif kind == 2 and alen in (8, 4, 1):   # integer values
                fmt = {8: "<Q", 4: "<I", 1: "<B"}[alen]
                old = struct.unpack_from(fmt, data, aoff + 4)[0]
                struct.pack_into(fmt, data, aoff + 4, interesting(rng, old, alen))
                done.append("cmd %d attr %d value" % (ci, typ))
            elif kind == 3:     # a name: evil or resized
                name = rng.choice(EVIL_NAMES + [bytes(data[aoff + 4:aoff + 4 + alen]) * 2])
                new = struct.pack("<HH", typ, len(name) & 0xffff) + name
                data[aoff:aoff + 4 + alen] = new
                struct.pack_into("<I", data, off, struct.unpack_from("<I", data, off)[0] + len(new) - 4 - alen)
                done.append("cmd %d attr %d name" % (ci, typ))
            else:
                what = mutate_bytes(rng, data, aoff + 4, aoff + 4 + alen)
                done.append("cmd %d attr %d %s" % (ci, typ, what))
        elif kind == 5 and donors and rng.randrange(3) == 0:   # a command of another stream
            donor = rng.choice(donors)
            do, dl = rng.choice(split_stream(donor) or [(0, 0)])
            data[off:off] = donor[do:do + dl]
            done.append("cmd %d from another stream" % ci)
            continue
        elif kind == 5:     # structure: delete, duplicate, move a command
            other = rng.randrange(len(cmds))
            chunk = bytes(data[off:off + length])
            op = rng.randrange(3)
            if op == 0:
                del data[off:off + length]
            elif op == 1:
                o2 = cmds[other][0]
                data[o2:o2] = chunk
            else:
                del data[off:off + length]
                o2 = split_stream(data)[other - (other > ci)][0] if other != ci and split_stream(data) else off
                data[o2:o2] = chunk
            done.append("cmd %d %s" % (ci, ("deleted", "duplicated", "moved")[op]))
            continue
        elif kind == 6:     # cut the stream
            cut = rng.randrange(off, off + length + 1)
            del data[cut:]
            done.append("cut at %d" % cut)
            continue
        else:
            done.append("cmd %d %s" % (ci, mutate_bytes(rng, data, off + CMD_HEADER, off + length)))
        cmds = split_stream(data)
        if ci < len(cmds) and rng.randrange(10):
            fix_crc(data, *cmds[ci])
    if rng.randrange(20) == 0:
        struct.pack_into("<I", data, 13, rng.choice((0, 2, 3, 4, 0xffffffff)))
        done.append("version")
    return "; ".join(done) or "nothing"


def stream_files(args):
    """The stream files named, a directory standing for its *.stream files."""
    out = []
    for a in args:
        out += sorted(os.path.join(a, f) for f in os.listdir(a) if f.endswith(".stream")) \
            if os.path.isdir(a) else [a]
    return out


def stream_campaign(args):
    streams = []
    box, out, n, seed, timeout = common_options(args, lambda a: streams.append(a) or True)
    streams = stream_files(streams)
    if not box or not out or not streams:
        raise SystemExit(__doc__)
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    box = box_works(box, out)
    findings = open(os.path.join(out, "findings.tsv"), "a")
    results = open(os.path.join(out, "results.tsv"), "a")     # seed, command, rc, first error
    work = tempfile.mkdtemp(prefix="qafs.", dir=os.environ.get("TMPDIR", "/var/tmp"))
    img, mnt = [""], os.path.join(work, "mnt")
    donors = [open(s, "rb").read() for s in streams]
    os.makedirs(mnt)
    rng = random.Random(seed)

    def fresh_fs():
        """A new image each time: the loop device of the last one may linger a while."""
        if os.path.ismount(mnt):
            subprocess.run(["umount", mnt], check=True)
        if os.path.exists(img[0]):
            os.unlink(img[0])
        img[0] = os.path.join(work, "dst%d.img" % i)
        with open(img[0], "wb") as f:
            f.truncate(1 << 30)
        subprocess.run(["mkfs.btrfs", "-q", "-f", img[0]], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["mount", "-o", "loop", img[0], mnt], check=True)
        os.makedirs(os.path.join(mnt, "outside"))
        with open(os.path.join(mnt, "outside", "target"), "w") as f:
            f.write("original\n")

    def outside(dests):
        """Everything on the scratch filesystem but dests: earlier receives included."""
        res = []
        for root, dirs, files in os.walk(mnt):
            dirs[:] = [d for d in dirs if os.path.join(root, d) not in dests]
            for f in dirs + files:
                st = os.lstat(os.path.join(root, f))
                res.append((root, f, st.st_mode, st.st_size, st.st_mtime_ns))
        return sorted(res)

    try:
        for i in range(n):
            if i % 200 == 0:
                fresh_fs()
            src = rng.choice(streams)
            mseed = rng.randrange(1 << 32)
            data = bytearray(open(src, "rb").read())
            desc = mutate_stream(data, mseed, donors)
            path = os.path.join(work, "s.stream")
            with open(path, "wb") as f:
                f.write(data)
            dest = os.path.join(mnt, "r", str(i))
            os.makedirs(dest)
            runs = [("dump", ["btrfs", "receive", "--dump", "-f", path], None),
                    ("receive", ["btrfs", "receive", "-E", "0", "-f", path, dest], dest)]
            if data[13:17] != b"\1\0\0\0":     # encoded data: our decompressors too
                os.makedirs(dest + "d")
                runs.append(("receive-decompress", ["btrfs", "receive", "-E", "0", "--force-decompress",
                                                    "-f", path, dest + "d"], dest + "d"))
            dests = (dest, dest + "d")
            before = outside(dests)
            for name, argv, jail in runs:
                rc, o, e, to, dt = run_one(box, argv, timeout, jail)
                what = classify(rc, e, to)
                if what is None and jail and outside(dests) != before:
                    what = "changed-outside"
                if what is None and rc and "ERROR: " not in e:
                    what = "no-message"
                errs = [ln for ln in e.splitlines() if ln.startswith("ERROR: ")]
                results.write("%d\t%s\t%d\t%s\n" % (mseed, name, rc, errs[0] if errs else ""))
                if what:
                    log = record(out, findings, ("stream", src, mseed, desc), name, what, argv, (rc, o, e, dt))
                    shutil.copy(path, log + ".stream")
            print("stream %d/%d seed %d %s: %s" % (i + 1, n, mseed, os.path.basename(src), desc), flush=True)
    finally:
        subprocess.run(["umount", mnt], stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))    # kill: unmount and clean up
    if len(sys.argv) >= 2 and sys.argv[1] == "streams":
        stream_campaign(sys.argv[2:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "mutate-stream":
        data = bytearray(open(sys.argv[2], "rb").read())
        print(mutate_stream(data, int(sys.argv[3]), [open(d, "rb").read() for d in stream_files(sys.argv[4:])]))
        open(sys.argv[2], "wb").write(data)
    elif len(sys.argv) >= 2 and sys.argv[1] == "run":
        campaign(sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "mutate":
        print(mutate(image_paths(sys.argv[2]), int(sys.argv[3])))
    elif len(sys.argv) == 3 and sys.argv[1] == "bases":
        subprocess.run(["sh", os.path.join(os.path.dirname(os.path.abspath(__file__)), "bases.sh"),
                        sys.argv[2]], check=True)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
