#!/usr/bin/env python3
"""Writes hostile send streams for tests/receive.test.

Usage: hostile_streams.py OUTDIR OUTSIDE_DIR
Writes OUTDIR/KIND.stream for every kind and prints the kinds. Each stream creates subvolume "h" (except the subvolume-name attacks) and then tries to
reach OUTSIDE_DIR (which holds a file "target"), or is malformed.

Usage: hostile_streams.py --foreign OUTDIR UUID TRANSID FILE
Writes OUTDIR/snapshot.stream (subvolume "h", a snapshot of the subvolume with UUID or
received UUID UUID and that ctransid or stransid) and OUTDIR/clone.stream (subvolume "h"
whose file "f" clones the first 4 KiB of FILE of that subvolume).
"""
import struct
import sys
import uuid

POLY = 0x82F63B78
TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ POLY if c & 1 else c >> 1
    TABLE.append(c)


def crc(data):  # crc32c, seed 0, no final inversion (the send stream's variant)
    c = 0
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c


(SUBVOL, MKFILE, MKDIR, MKNOD, MKFIFO, SYMLINK, RENAME, LINK, SET_XATTR, WRITE, CLONE,
 TRUNCATE, CHMOD, END) = (1, 3, 4, 5, 6, 8, 9, 10, 13, 15, 16, 17, 18, 21)
(A_UUID, A_CTRANSID, A_INO, A_SIZE, A_MODE, A_RDEV, A_XNAME, A_XDATA, A_PATH, A_PATH_TO,
 A_LINK, A_OFF, A_DATA, A_CUUID, A_CCTRANSID, A_CPATH, A_COFF, A_CLEN) = (
    1, 2, 3, 4, 5, 8, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24)
UUID = uuid.UUID("12345678-1234-5678-1234-567812345678").bytes


def tlv(t, v):
    if isinstance(v, str):
        v = v.encode()
    if isinstance(v, int):
        v = struct.pack("<Q", v)
    return struct.pack("<HH", t, len(v)) + v


def cmd(c, *attrs):
    payload = b"".join(tlv(t, v) for t, v in attrs)
    head = struct.pack("<IHI", len(payload), c, 0)
    return struct.pack("<IHI", len(payload), c, crc(head + payload)) + payload


def stream(*cmds, name="h"):
    out = b"btrfs-stream\0" + struct.pack("<I", 1)
    if name is not None:
        out += cmd(SUBVOL, (A_PATH, name), (A_UUID, UUID), (A_CTRANSID, 1))
    return out + b"".join(cmds) + cmd(END)


def mkfile(p, ino=257):
    return cmd(MKFILE, (A_PATH, p), (A_INO, ino))


def write(p, data=b"escaped\n"):
    return cmd(WRITE, (A_PATH, p), (A_OFF, 0), (A_DATA, data))


def mkdir(p, ino=257):
    return cmd(MKDIR, (A_PATH, p), (A_INO, ino))


def rename(a, b):
    return cmd(RENAME, (A_PATH, a), (A_PATH_TO, b))


def symlink(p, dest, ino=300):
    return cmd(SYMLINK, (A_PATH, p), (A_INO, ino), (A_LINK, dest))


def build(kind, out):
    tgt = out + "/target"
    evil_link = cmd(SYMLINK, (A_PATH, "evil"), (A_INO, 300), (A_LINK, tgt))
    evil_dir = cmd(SYMLINK, (A_PATH, "evdir"), (A_INO, 301), (A_LINK, out))
    def evil_link_at(p):
        return symlink(p, tgt)
    rel_dir = cmd(SYMLINK, (A_PATH, "up"), (A_INO, 302), (A_LINK, "../../../../../../.."))
    kinds = {
        "dotdot": lambda: stream(mkfile("../../escaped-dotdot"), write("../../escaped-dotdot")),
        "dotdot-inner": lambda: stream(cmd(MKDIR, (A_PATH, "d"), (A_INO, 257)),
                                       mkfile("d/../../escaped")),
        "absolute": lambda: stream(mkfile(out + "/abs-escape"), write(out + "/abs-escape")),
        "symlink-write": lambda: stream(evil_link, write("evil")),
        "symlink-truncate": lambda: stream(evil_link, cmd(TRUNCATE, (A_PATH, "evil"), (A_SIZE, 0))),
        "symlink-chmod": lambda: stream(evil_link, cmd(CHMOD, (A_PATH, "evil"), (A_MODE, 0o777))),
        "symlink-xattr": lambda: stream(evil_link, cmd(SET_XATTR, (A_PATH, "evil"),
                                                       (A_XNAME, "user.evil"), (A_XDATA, "x"))),
        "symlink-dir-create": lambda: stream(evil_dir, mkfile("evdir/created")),
        "relative-symlink-dir": lambda: stream(rel_dir, mkfile("up/escaped-rel")),
        "link-outside": lambda: stream(evil_dir, cmd(LINK, (A_PATH, "stolen"),
                                                     (A_LINK, "evdir/target"))),
        "link-dotdot": lambda: stream(cmd(LINK, (A_PATH, "stolen"), (A_LINK, "../../outside/target"))),
        "rename-outside": lambda: stream(evil_dir, mkfile("x"),
                                         cmd(RENAME, (A_PATH, "x"), (A_PATH_TO, "evdir/renamed"))),
        "rename-dotdot": lambda: stream(mkfile("x"),
                                        cmd(RENAME, (A_PATH, "x"), (A_PATH_TO, "../../renamed"))),
        "clone-outside": lambda: stream(evil_dir, mkfile("c"),
                                        cmd(CLONE, (A_PATH, "c"), (A_OFF, 0), (A_CLEN, 4096),
                                            (A_CUUID, UUID), (A_CCTRANSID, 1),
                                            (A_CPATH, "evdir/target"), (A_COFF, 0))),
        "subvol-dotdot": lambda: stream(mkfile("f"), name="../../escaped-subvol"),
        "subvol-slash": lambda: stream(mkfile("f"), name="a/b"),
        "before-subvol": lambda: stream(mkfile("../../escaped-early"), name=None),
        "truncated": lambda: stream(mkfile("f"), write("f", b"x" * 3000))[:-1500],
        "bad-crc": lambda: bytes(b ^ 0x40 if i == 40 else b
                                 for i, b in enumerate(stream(mkfile("f"), write("f")))),
        "huge-length": lambda: stream(name="h")[:-10] + struct.pack("<IHI", 0xFFFFFFF0, WRITE, 0),
        "unknown-command": lambda: stream(cmd(77, (A_PATH, "f"))),
        "huge-offset": lambda: stream(mkfile("f"), cmd(WRITE, (A_PATH, "f"),
                                                       (A_OFF, 0xFFFFFFFFFFFFFFF0), (A_DATA, b"x" * 64))),
        "no-end": lambda: stream(mkfile("f"))[:-10],
        # a name that receive has open (a directory or the file being written) is moved
        # away and replaced by a symlink: the next use must not go through the old one
        "moved-dir-symlink": lambda: stream(mkdir("d"), mkfile("d/f"), rename("d", "d2"),
                                            symlink("d", out), mkfile("d/escaped")),
        "moved-parent-symlink": lambda: stream(mkdir("a"), mkdir("a/b", 258), mkfile("a/b/f", 259),
                                               rename("a", "a2"), symlink("a", out),
                                               mkfile("a/b/escaped")),
        "moved-file-symlink-write": lambda: stream(mkfile("f"), write("f", b"ok"), rename("f", "g"),
                                                   evil_link_at("f"), write("f")),
        "moved-file-symlink-chmod": lambda: stream(mkfile("f"), rename("f", "g"), evil_link_at("f"),
                                                   cmd(CHMOD, (A_PATH, "f"), (A_MODE, 0o777))),
        # data for a fifo or a device node the stream made: refused before any open (a
        # fifo blocks, a device can act when opened); 1:3 is /dev/null
        "write-fifo": lambda: stream(cmd(MKFIFO, (A_PATH, "p"), (A_INO, 257)), write("p")),
        "write-device": lambda: stream(cmd(MKNOD, (A_PATH, "n"), (A_INO, 257), (A_MODE, 0o20644),
                                           (A_RDEV, 0x103)), write("n")),
        "clone-from-device": lambda: stream(cmd(MKNOD, (A_PATH, "n"), (A_INO, 257), (A_MODE, 0o20644),
                                                (A_RDEV, 0x103)), mkfile("c", 258),
                                            cmd(CLONE, (A_PATH, "c"), (A_OFF, 0), (A_CLEN, 4096),
                                                (A_CUUID, UUID), (A_CCTRANSID, 1),
                                                (A_CPATH, "n"), (A_COFF, 0))),
    }
    return kinds[kind]()


SNAPSHOT = 2


def foreign(outdir, source, transid, path):
    src, transid = uuid.UUID(source).bytes, int(transid)
    snap = b"btrfs-stream\0" + struct.pack("<I", 1) + cmd(
        SNAPSHOT, (A_PATH, "h"), (A_UUID, UUID), (A_CTRANSID, 1), (A_CUUID, src),
        (A_CCTRANSID, transid)) + cmd(END)
    clone = stream(mkfile("f"), cmd(TRUNCATE, (A_PATH, "f"), (A_SIZE, 4096)),
                   cmd(CLONE, (A_PATH, "f"), (A_OFF, 0), (A_CLEN, 4096), (A_CUUID, src),
                       (A_CCTRANSID, transid), (A_CPATH, path), (A_COFF, 0)))
    for name, data in (("snapshot", snap), ("clone", clone)):
        with open("%s/%s.stream" % (outdir, name), "wb") as f:
            f.write(data)
    return 0


def main():
    if sys.argv[1] == "--foreign":
        return foreign(*sys.argv[2:6])
    outdir, outside = sys.argv[1:3]
    for kind in KINDS:
        with open("%s/%s.stream" % (outdir, kind), "wb") as f:
            f.write(build(kind, outside))
        print(kind)
    return 0


KINDS = ["dotdot", "dotdot-inner", "absolute", "symlink-write", "symlink-truncate",
         "symlink-chmod", "symlink-xattr", "symlink-dir-create", "relative-symlink-dir",
         "link-outside", "link-dotdot", "rename-outside", "rename-dotdot", "clone-outside",
         "subvol-dotdot", "subvol-slash", "before-subvol", "truncated", "bad-crc",
         "huge-length", "huge-offset", "unknown-command", "no-end", "moved-dir-symlink",
         "moved-parent-symlink", "moved-file-symlink-write", "moved-file-symlink-chmod",
         "write-fifo", "write-device", "clone-from-device"]

if __name__ == "__main__":
    sys.exit(main())
