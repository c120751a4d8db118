"""Read and patch the on-disk structures of a btrfs image (for the damage tool).

The image is parsed directly: superblock, system chunk array, chunk tree, root
tree. Tree blocks are rewritten with a fresh checksum on every mirror that lies
on this image (SINGLE, DUP, RAID1*); superblock changes go to every copy.
Only what tests need: one device per image, crc32c/xxhash/sha256/blake2b checksums."""
import hashlib
import struct

SUPER_OFF = 65536
SUPER_COPIES = (65536, 64 << 20, 256 << 30)
HEADER = 101
ITEM = 25
KEY_PTR = 33

KEY_TYPES = {
    "INODE_ITEM": 1, "INODE_REF": 12, "INODE_EXTREF": 13, "XATTR_ITEM": 24,
    "VERITY_DESC_ITEM": 36, "VERITY_MERKLE_ITEM": 37, "ORPHAN_ITEM": 48,
    "DIR_LOG_ITEM": 60, "DIR_LOG_INDEX": 72, "DIR_ITEM": 84, "DIR_INDEX": 96,
    "EXTENT_DATA": 108, "EXTENT_CSUM": 128, "ROOT_ITEM": 132, "ROOT_BACKREF": 144,
    "ROOT_REF": 156, "EXTENT_ITEM": 168, "METADATA_ITEM": 169, "EXTENT_OWNER_REF": 172,
    "TREE_BLOCK_REF": 176, "EXTENT_DATA_REF": 178, "SHARED_BLOCK_REF": 182,
    "SHARED_DATA_REF": 184, "BLOCK_GROUP_ITEM": 192, "FREE_SPACE_INFO": 198,
    "FREE_SPACE_EXTENT": 199, "FREE_SPACE_BITMAP": 200, "DEV_EXTENT": 204,
    "DEV_ITEM": 216, "CHUNK_ITEM": 228, "QGROUP_STATUS": 240, "QGROUP_INFO": 242,
    "QGROUP_LIMIT": 244, "QGROUP_RELATION": 246, "TEMPORARY_ITEM": 248,
    "PERSISTENT_ITEM": 249, "DEV_STATS": 249, "DEV_REPLACE": 250, "UUID_KEY_SUBVOL": 251,
    "UUID_KEY_RECEIVED_SUBVOL": 252, "STRING_ITEM": 253,
}
U64 = 1 << 64
OBJECTIDS = {
    "ROOT_TREE": 1, "EXTENT_TREE": 2, "CHUNK_TREE": 3, "DEV_TREE": 4, "FS_TREE": 5,
    "ROOT_TREE_DIR": 6, "CSUM_TREE": 7, "QUOTA_TREE": 8, "UUID_TREE": 9,
    "FREE_SPACE_TREE": 10, "BLOCK_GROUP_TREE": 11, "DEV_STATS": 0, "BALANCE": U64 - 4,
    "ORPHAN": U64 - 5, "TREE_LOG": U64 - 6, "TREE_LOG_FIXUP": U64 - 7, "TREE_RELOC": U64 - 8,
    "DATA_RELOC_TREE": U64 - 9, "EXTENT_CSUM": U64 - 10, "FREE_SPACE": U64 - 11,
    "FREE_INO": U64 - 12, "FIRST_CHUNK_TREE": 256,
}
TREES = {"root": 1, "extent": 2, "chunk": 3, "dev": 4, "fs": 5, "csum": 7, "quota": 8,
         "uuid": 9, "free-space": 10, "block-group": 11, "data-reloc": U64 - 9}

# Item layouts: field -> (offset, struct format). Items made of a sequence of
# entries (names) say so with an "entry" size function (fixed size + name_len
# at an offset [+ data_len at an offset]).
_KEY = {"objectid": (0, "<Q"), "type": (8, "<B"), "offset": (9, "<Q")}
_TS = ("sec", "<Q", "nsec", "<I")


def _sub(prefix, at, fields):
    return {prefix + "." + k: (at + o, f) for k, (o, f) in fields.items()}


INODE = {"generation": (0, "<Q"), "transid": (8, "<Q"), "size": (16, "<Q"), "nbytes": (24, "<Q"),
         "block_group": (32, "<Q"), "nlink": (40, "<I"), "uid": (44, "<I"), "gid": (48, "<I"),
         "mode": (52, "<I"), "rdev": (56, "<Q"), "flags": (64, "<Q"), "sequence": (72, "<Q")}
for _i, _n in enumerate(("atime", "ctime", "mtime", "otime")):
    INODE[_n + ".sec"] = (112 + 12 * _i, "<Q")
    INODE[_n + ".nsec"] = (120 + 12 * _i, "<I")
DIR = dict(_sub("location", 0, _KEY), transid=(17, "<Q"), data_len=(25, "<H"),
           name_len=(27, "<H"), type=(29, "<B"))
ROOT = dict(_sub("inode", 0, INODE), generation=(160, "<Q"), root_dirid=(168, "<Q"),
            bytenr=(176, "<Q"), byte_limit=(184, "<Q"), bytes_used=(192, "<Q"),
            last_snapshot=(200, "<Q"), flags=(208, "<Q"), refs=(216, "<I"),
            drop_level=(237, "<B"), level=(238, "<B"), generation_v2=(239, "<Q"),
            uuid=(247, "16s"), parent_uuid=(263, "16s"), received_uuid=(279, "16s"),
            ctransid=(295, "<Q"), otransid=(303, "<Q"), stransid=(311, "<Q"), rtransid=(319, "<Q"))
ROOT.update(_sub("drop_progress", 220, _KEY))
ROOT_REF = {"dirid": (0, "<Q"), "sequence": (8, "<Q"), "name_len": (16, "<H")}
FILE_EXTENT = {"generation": (0, "<Q"), "ram_bytes": (8, "<Q"), "compression": (16, "<B"),
               "encryption": (17, "<B"), "other_encoding": (18, "<H"), "type": (20, "<B"),
               "disk_bytenr": (21, "<Q"), "disk_num_bytes": (29, "<Q"), "offset": (37, "<Q"),
               "num_bytes": (45, "<Q")}
DEV_ITEM = {"devid": (0, "<Q"), "total_bytes": (8, "<Q"), "bytes_used": (16, "<Q"),
            "io_align": (24, "<I"), "io_width": (28, "<I"), "sector_size": (32, "<I"),
            "type": (36, "<Q"), "generation": (44, "<Q"), "start_offset": (52, "<Q"),
            "dev_group": (60, "<I"), "seek_speed": (64, "<B"), "bandwidth": (65, "<B"),
            "uuid": (66, "16s"), "fsid": (82, "16s")}
LAYOUTS = {
    1: INODE,
    12: (dict(index=(0, "<Q"), name_len=(8, "<H")), 10, 8, None),
    13: (dict(parent_objectid=(0, "<Q"), index=(8, "<Q"), name_len=(16, "<H")), 18, 16, None),
    24: (DIR, 30, 27, 25), 84: (DIR, 30, 27, 25), 96: (DIR, 30, 27, 25),
    108: FILE_EXTENT,
    132: ROOT,
    144: (ROOT_REF, 18, 16, None), 156: (ROOT_REF, 18, 16, None),
    168: dict(refs=(0, "<Q"), generation=(8, "<Q"), flags=(16, "<Q"), level=(41, "<B"),
              **_sub("key", 24, _KEY)),
    169: dict(refs=(0, "<Q"), generation=(8, "<Q"), flags=(16, "<Q")),
    178: dict(root=(0, "<Q"), objectid=(8, "<Q"), offset=(16, "<Q"), count=(24, "<I")),
    184: dict(count=(0, "<I")),
    192: dict(used=(0, "<Q"), chunk_objectid=(8, "<Q"), flags=(16, "<Q")),
    198: dict(extent_count=(0, "<I"), flags=(4, "<I")),
    204: dict(chunk_tree=(0, "<Q"), chunk_objectid=(8, "<Q"), chunk_offset=(16, "<Q"),
              length=(24, "<Q")),
    216: DEV_ITEM,
    228: dict(length=(0, "<Q"), owner=(8, "<Q"), stripe_len=(16, "<Q"), type=(24, "<Q"),
              io_align=(32, "<I"), io_width=(36, "<I"), sector_size=(40, "<I"),
              num_stripes=(44, "<H"), sub_stripes=(46, "<H"), **{
                  "stripe%d.%s" % (i, n): (48 + 32 * i + o, f) for i in range(4)
                  for n, (o, f) in (("devid", (0, "<Q")), ("offset", (8, "<Q")))}),
    240: dict(version=(0, "<Q"), generation=(8, "<Q"), flags=(16, "<Q"), rescan=(24, "<Q"),
              enable_gen=(32, "<Q")),
    242: dict(generation=(0, "<Q"), rfer=(8, "<Q"), rfer_cmpr=(16, "<Q"), excl=(24, "<Q"),
              excl_cmpr=(32, "<Q")),
    244: dict(flags=(0, "<Q"), max_rfer=(8, "<Q"), max_excl=(16, "<Q")),
    249: {n: (8 * i, "<Q") for i, n in enumerate(
        ("write_errs", "read_errs", "flush_errs", "corruption_errs", "generation_errs"))},
}
HEADER_FIELDS = {"csum": (0, "32s"), "fsid": (32, "16s"), "bytenr": (48, "<Q"),
                 "flags": (56, "<Q"), "chunk_tree_uuid": (64, "16s"), "generation": (80, "<Q"),
                 "owner": (88, "<Q"), "nritems": (96, "<I"), "level": (100, "<B")}
SUPER_FIELDS = dict(
    csum=(0, "32s"), fsid=(32, "16s"), bytenr=(48, "<Q"), flags=(56, "<Q"), magic=(64, "<Q"),
    generation=(72, "<Q"), root=(80, "<Q"), chunk_root=(88, "<Q"), log_root=(96, "<Q"),
    total_bytes=(112, "<Q"), bytes_used=(120, "<Q"), root_dir_objectid=(128, "<Q"),
    num_devices=(136, "<Q"), sectorsize=(144, "<I"), nodesize=(148, "<I"),
    stripesize=(156, "<I"), sys_chunk_array_size=(160, "<I"), chunk_root_generation=(164, "<Q"),
    compat_flags=(172, "<Q"), compat_ro_flags=(180, "<Q"), incompat_flags=(188, "<Q"),
    csum_type=(196, "<H"), root_level=(198, "<B"), chunk_root_level=(199, "<B"),
    log_root_level=(200, "<B"), label=(299, "256s"), cache_generation=(555, "<Q"),
    uuid_tree_generation=(563, "<Q"), metadata_uuid=(571, "16s"), nr_global_roots=(587, "<Q"),
    **_sub("dev_item", 201, DEV_ITEM))


def crc32c(data, crc=0xFFFFFFFF):
    table = crc32c.table
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


crc32c.table = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    crc32c.table.append(_c)


_M64 = (1 << 64) - 1
_XP1, _XP2, _XP3, _XP4, _XP5 = (11400714785074694791, 14029467366897019727, 1609587929392839161,
                                9650029242287828579, 2870177450012600261)


def _rotl64(x, r):
    return ((x << r) | (x >> (64 - r))) & _M64


def _xxh64_round(acc, lane):
    return _rotl64((acc + lane * _XP2) & _M64, 31) * _XP1 & _M64


def xxhash64(data, seed=0):
    """XXH64 (the xxhash checksum: seed 0, stored little-endian)."""
    n, pos = len(data), 0
    if n >= 32:
        v = [(seed + _XP1 + _XP2) & _M64, (seed + _XP2) & _M64, seed, (seed - _XP1) & _M64]
        while pos + 32 <= n:
            lanes = struct.unpack_from("<4Q", data, pos)
            v = [_xxh64_round(a, b) for a, b in zip(v, lanes)]
            pos += 32
        h = (_rotl64(v[0], 1) + _rotl64(v[1], 7) + _rotl64(v[2], 12) + _rotl64(v[3], 18)) & _M64
        for a in v:
            h = ((h ^ _xxh64_round(0, a)) * _XP1 + _XP4) & _M64
    else:
        h = (seed + _XP5) & _M64
    h = (h + n) & _M64
    while pos + 8 <= n:
        h = (_rotl64(h ^ _xxh64_round(0, struct.unpack_from("<Q", data, pos)[0]), 27) * _XP1 + _XP4) & _M64
        pos += 8
    if pos + 4 <= n:
        h = (_rotl64(h ^ (struct.unpack_from("<I", data, pos)[0] * _XP1 & _M64), 23) * _XP2 + _XP3) & _M64
        pos += 4
    for b in data[pos:]:
        h = _rotl64(h ^ (b * _XP5 & _M64), 11) * _XP1 & _M64
    h = (h ^ (h >> 33)) * _XP2 & _M64
    h = (h ^ (h >> 29)) * _XP3 & _M64
    return h ^ (h >> 32)


def checksum(csum_type, data):
    if csum_type == 0:
        return struct.pack("<I", crc32c(data))
    if csum_type == 1:
        return struct.pack("<Q", xxhash64(data))
    if csum_type == 2:
        return hashlib.sha256(data).digest()
    if csum_type == 3:
        return hashlib.blake2b(data, digest_size=32).digest()
    raise SystemExit("checksum type %d not supported by the damage tool" % csum_type)


def name_hash(name):
    """btrfs directory name hash: crc32c seeded with ~1, not inverted."""
    return crc32c(name, 0xFFFFFFFE) ^ 0xFFFFFFFF


def parse_int(s, names=None):
    s = s.strip()
    if names and s.upper() in names:
        return names[s.upper()]
    v = int(s, 0)
    return v % U64 if v < 0 else v


def parse_key(text, old=None):
    """'257 INODE_ITEM 0' or '(257,1,0)': each part a number, a name, '*' (any)
    or '$' (any, last match); with an old key, +N/-N parts are relative to it."""
    parts = [p for p in text.replace("(", " ").replace(")", " ").replace(",", " ").split()]
    if len(parts) != 3:
        raise SystemExit("a key is OBJECTID TYPE OFFSET, not %r" % text)
    out = []
    for i, p in enumerate(parts):
        if p in ("*", "$"):
            out.append(p)
        elif old and p[:1] in "+-":
            out.append((old[i] + int(p, 0)) % U64)
        else:
            out.append(parse_int(p, (OBJECTIDS, KEY_TYPES, None)[i]))
    return tuple(out)


def key_match(pattern, key):
    return all(p in ("*", "$") or p == k for p, k in zip(pattern, key))


class Leaf:
    """A tree block held in memory; item edits keep the layout valid."""

    def __init__(self, fs, logical, data):
        self.fs, self.logical, self.b = fs, logical, bytearray(data)

    @property
    def nritems(self):
        return struct.unpack_from("<I", self.b, 96)[0]

    @property
    def level(self):
        return self.b[100]

    def key(self, slot):
        base = HEADER + slot * (ITEM if self.level == 0 else KEY_PTR)
        return struct.unpack_from("<QBQ", self.b, base)

    def set_key(self, slot, key):
        base = HEADER + slot * (ITEM if self.level == 0 else KEY_PTR)
        struct.pack_into("<QBQ", self.b, base, *key)

    def child(self, slot):
        return struct.unpack_from("<Q", self.b, HEADER + slot * KEY_PTR + 17)[0]

    def item(self, slot):
        """(data offset in the block, size)"""
        off, size = struct.unpack_from("<II", self.b, HEADER + slot * ITEM + 17)
        return HEADER + off, size

    def data(self, slot):
        off, size = self.item(slot)
        return bytes(self.b[off:off + size])

    def free_space(self):
        n = self.nritems
        low = self.item(n - 1)[0] if n else len(self.b)
        return low - (HEADER + n * ITEM)

    def _shift(self, first, delta):
        """Moves the data of items first.. by delta bytes (toward the block end
        when positive), fixing their offsets."""
        n = self.nritems
        if first >= n:
            return
        low = self.item(n - 1)[0]
        high = self.item(first)[0] + self.item(first)[1]
        self.b[low + delta:high + delta] = self.b[low:high]
        for s in range(first, n):
            base = HEADER + s * ITEM + 17
            struct.pack_into("<I", self.b, base, struct.unpack_from("<I", self.b, base)[0] + delta)

    def set_data(self, slot, data):
        off, size = self.item(slot)
        delta = size - len(data)
        if -delta > self.free_space():
            raise SystemExit("no room in leaf %d for %d more bytes" % (self.logical, -delta))
        end = off + size
        # data of this item sits at [off, end); later items are below it
        self._shift(slot + 1, delta)
        new_off = end - len(data)
        self.b[new_off:end] = data
        struct.pack_into("<II", self.b, HEADER + slot * ITEM + 17, new_off - HEADER, len(data))

    def delete(self, slot):
        n = self.nritems
        _, size = self.item(slot)
        self._shift(slot + 1, size)
        start, end = HEADER + slot * ITEM, HEADER + n * ITEM
        self.b[start:end - ITEM] = self.b[start + ITEM:end]
        self.b[end - ITEM:end] = bytes(ITEM)
        struct.pack_into("<I", self.b, 96, n - 1)

    def insert(self, slot, key, data):
        n = self.nritems
        if len(data) + ITEM > self.free_space():
            raise SystemExit("no room in leaf %d for a new item" % self.logical)
        # data end of the item before the new slot (or the block end)
        end = self.item(slot - 1)[0] if slot else len(self.b)
        self._shift(slot, -len(data))
        start = HEADER + slot * ITEM
        self.b[start + ITEM:HEADER + (n + 1) * ITEM] = self.b[start:HEADER + n * ITEM]
        struct.pack_into("<QBQII", self.b, start, *key, end - len(data) - HEADER, len(data))
        self.b[end - len(data):end] = data
        struct.pack_into("<I", self.b, 96, n + 1)


class Fs:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            f.seek(SUPER_OFF)
            self.sb = bytearray(f.read(4096))
        if self.sb[64:72] != b"_BHRfS_M":
            raise SystemExit("%s: no btrfs superblock" % path)
        g = lambda n: self.super_get(n)
        self.nodesize, self.csum_type = g("nodesize"), g("csum_type")
        self.devid = g("dev_item.devid")
        self.chunks = []        # (logical, length, [physical offsets on this device])
        arr = self.sb[811:811 + g("sys_chunk_array_size")]
        pos = 0
        while pos + 17 <= len(arr):
            key = struct.unpack_from("<QBQ", arr, pos)
            pos += 17
            pos += self._add_chunk(key[2], bytes(arr[pos:]))
        for leaf, slot in self.walk(g("chunk_root")):
            key = leaf.key(slot)
            if key[1] == 228:
                self._add_chunk(key[2], leaf.data(slot))

    def super_get(self, name):
        off, fmt = SUPER_FIELDS[name]
        return struct.unpack_from(fmt, self.sb, off)[0]

    def _add_chunk(self, logical, c):
        length, typ = struct.unpack_from("<Q", c, 0)[0], struct.unpack_from("<Q", c, 24)[0]
        num = struct.unpack_from("<H", c, 44)[0]
        if typ & (0x8 | 0x40 | 0x80 | 0x100):   # raid0/10/5/6: striped
            raise SystemExit("striped chunk profiles are not supported by the damage tool")
        phys = [struct.unpack_from("<Q", c, 48 + 32 * i + 8)[0] for i in range(num)
                if struct.unpack_from("<Q", c, 48 + 32 * i)[0] == self.devid]
        if not any(s == logical for s, _, _ in self.chunks):
            self.chunks.append((logical, length, phys))
        return 48 + 32 * num

    def mirrors(self, logical):
        for start, length, phys in self.chunks:
            if start <= logical < start + length:
                return [p + logical - start for p in phys]
        raise SystemExit("logical %d is not mapped" % logical)

    def read_block(self, logical):
        with open(self.path, "rb") as f:
            f.seek(self.mirrors(logical)[0])
            return Leaf(self, logical, f.read(self.nodesize))

    def write_block(self, leaf, fix_csum=True, mirror=None):
        if fix_csum:
            leaf.b[0:32] = checksum(self.csum_type, bytes(leaf.b[32:])).ljust(32, b"\0")
        with open(self.path, "r+b") as f:
            for i, p in enumerate(self.mirrors(leaf.logical)):
                if mirror is None or mirror == i:
                    f.seek(p)
                    f.write(leaf.b)

    def write_super(self, copies=None, fix_csum=True):
        size = __import__("os").path.getsize(self.path)
        with open(self.path, "r+b") as f:
            for i, off in enumerate(SUPER_COPIES):
                if off + 4096 > size or (copies is not None and i not in copies):
                    continue
                f.seek(off)
                if i and f.read(72)[64:72] != b"_BHRfS_M":
                    continue
                sb = bytearray(self.sb)
                struct.pack_into("<Q", sb, 48, off)
                if fix_csum:
                    sb[0:32] = checksum(self.csum_type, bytes(sb[32:])).ljust(32, b"\0")
                f.seek(off)
                f.write(sb)

    def walk(self, bytenr, path=()):
        """Yields (leaf, slot) for every item in key order; leaf.path lists the
        (node, slot) pairs above it."""
        block = self.read_block(bytenr)
        if block.level == 0:
            block.path = list(path)
            for slot in range(block.nritems):
                yield block, slot
            return
        for slot in range(block.nritems):
            yield from self.walk(block.child(slot), path + ((block, slot),))

    def tree_root(self, tree):
        """Bytenr of a tree's root block: a name of TREES, a number, 'log' (the
        log root tree), 'log:ID' (the log of subvolume ID) or 'reloc:ID' (its
        relocation tree)."""
        if tree == "root":
            return self.super_get("root")
        if tree == "chunk":
            return self.super_get("chunk_root")
        if tree == "log":
            return self.super_get("log_root")
        src = self.super_get("root")
        if tree.startswith("log:"):
            want, src = (U64 - 6, 132, parse_int(tree[4:])), self.super_get("log_root")
        elif tree.startswith("reloc:"):
            want = (U64 - 8, 132, parse_int(tree[6:]))
        else:
            want = (TREES[tree] if tree in TREES else parse_int(tree, OBJECTIDS), 132, "*")
        for leaf, slot in self.walk(src):
            if key_match(want, leaf.key(slot)):
                return struct.unpack_from("<Q", leaf.data(slot), 176)[0]
        raise SystemExit("no root item for tree %s" % tree)

    def find(self, tree, pattern):
        """(leaf, slot) of the first item matching the key pattern (the last one
        when a part is '$')."""
        hit = None
        for leaf, slot in self.walk(self.tree_root(tree)):
            if key_match(pattern, leaf.key(slot)):
                hit = (leaf, slot)
                if "$" not in pattern:
                    break
        if not hit:
            raise SystemExit("no item (%s) in tree %s" % (" ".join(map(str, pattern)), tree))
        return hit

    def fix_parent_keys(self, leaf):
        """After slot 0 of a block changed its key, the key pointers above follow."""
        key, node_slot = leaf.key(0), len(leaf.path) - 1
        while node_slot >= 0:
            node, slot = leaf.path[node_slot]
            node = self.read_block(node.logical)
            node.set_key(slot, key)
            self.write_block(node)
            if slot:
                break
            node_slot -= 1


def entries(data, layout):
    """Splits an item made of name entries into (start, length) pairs."""
    fields, fixed, name_at, data_at = layout
    pos, out = 0, []
    while pos + fixed <= len(data):
        n = fixed + struct.unpack_from("<H", data, pos + name_at)[0]
        if data_at is not None:
            n += struct.unpack_from("<H", data, pos + data_at)[0]
        out.append((pos, min(n, len(data) - pos)))
        pos += n
    return out


def field_location(key_type, data, field):
    """(offset in the item, struct format) of FIELD: a name of the item's
    layout (N.name for the N-th entry of a name item), or @OFF:FMT raw."""
    if field.startswith("@"):
        off, fmt = field[1:].split(":")
        fmt = {"u8": "<B", "u16": "<H", "u32": "<I", "u64": "<Q"}.get(fmt, fmt)
        return int(off, 0), fmt
    layout = LAYOUTS.get(key_type)
    if layout is None:
        raise SystemExit("no field names for key type %d: use @OFFSET:FMT" % key_type)
    base = 0
    if isinstance(layout, tuple):
        idx = 0
        if field[:1].isdigit():
            idx, field = field.split(".", 1)
            idx = int(idx)
        ents = entries(data, layout)
        if idx >= len(ents):
            raise SystemExit("the item has %d entries" % len(ents))
        base = ents[idx][0]
        if field == "name":
            return base + layout[1], "name"
        layout = layout[0]
    if field not in layout:
        raise SystemExit("unknown field %s (known: %s)" % (field, ", ".join(sorted(layout))))
    off, fmt = layout[field]
    return base + off, fmt


def pack_value(fmt, old, value):
    """VALUE: a number, +N/-N relative to the old one, or for byte fields a
    hex string / text."""
    if fmt.endswith("s"):
        n = int(fmt[:-1])
        raw = bytes.fromhex(value[4:]) if value.startswith("hex:") else value.encode()
        return struct.pack(fmt, raw.ljust(n, b"\0")[:n])
    if value[:1] in "+-" and len(value) > 1:
        v = old + int(value, 0)
    else:
        v = parse_int(value, dict(KEY_TYPES, **OBJECTIDS))
    return struct.pack(fmt, v % (1 << (8 * struct.calcsize(fmt))))
