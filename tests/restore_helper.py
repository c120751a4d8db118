#!/usr/bin/env python3
"""Helpers for tests/restore.test (python3 standard library only).

  manifest DIR [--no-dirmeta]   one line per entry below DIR: path type mode uid gid
                                size sha256 / link target, file xattrs, file mtimes
  rename IMG OLD NEW NODESIZE   replace the name bytes OLD by NEW (same length) in every
                                tree block of a btrfs image and fix the block checksums
                                (crc32c): makes names no kernel would write
"""
import hashlib
import os
import stat
import sys


def entries(root):
    """The manifest lines of everything below root (a file that cannot be read: 'error N')."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            m = st.st_mode
            if stat.S_ISREG(m):
                h = hashlib.sha256()
                try:
                    with open(p, 'rb') as f:
                        for block in iter(lambda: f.read(1 << 20), b''):
                            h.update(block)
                except OSError as e:
                    h.update(b'error %d' % e.errno)
                xattrs = ','.join('%s=%s' % (x, hashlib.sha256(os.getxattr(p, x)).hexdigest()[:16])
                                  for x in sorted(os.listxattr(p)))
                out.append('%s f %o %d %d %d %s %s mtime=%d.%09d' % (
                    rel, stat.S_IMODE(m), st.st_uid, st.st_gid, st.st_size, h.hexdigest(),
                    xattrs, st.st_mtime_ns // 10**9, st.st_mtime_ns % 10**9))
            elif stat.S_ISDIR(m):
                out.append('%s d %o %d %d' % (rel, stat.S_IMODE(m), st.st_uid, st.st_gid))
            elif stat.S_ISLNK(m):
                out.append('%s l %d %d %s mtime=%d' % (rel, st.st_uid, st.st_gid, os.readlink(p),
                                                       st.st_mtime_ns))
            # fifos, devices and sockets are not restored (as the reference)
    return sorted(out)


def manifest(root):
    print('\n'.join(entries(root)))


def crc32c(data):
    table = crc32c.table
    if table is None:
        table = crc32c.table = []
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)
    crc = 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


crc32c.table = None


def rename(img, old, new, nodesize):
    """Renames directory entries and inode refs named old in every leaf of the image."""
    old, new, nodesize = old.encode(), new.encode(), int(nodesize)
    assert len(old) == len(new)
    changed = 0
    with open(img, 'r+b') as f:
        f.seek(65536 + 32)
        fsid = f.read(16)
        size = f.seek(0, 2)
        for start in range(0, size, nodesize):
            f.seek(start)
            block = bytearray(f.read(nodesize))
            if block[32:48] != fsid or block[100] != 0:
                continue
            if rename_in_leaf(block, old, new):
                block[0:32] = crc32c(bytes(block[32:])).to_bytes(4, 'little') + bytes(28)
                f.seek(start)
                f.write(block)
                changed += 1
    print(changed)


def rename_in_leaf(block, old, new):
    nritems = int.from_bytes(block[96:100], 'little')
    hit = False
    for i in range(min(nritems, 1000)):
        item = 101 + 25 * i
        ktype = block[item + 8]
        off = 101 + int.from_bytes(block[item + 17:item + 21], 'little')
        size = int.from_bytes(block[item + 21:item + 25], 'little')
        if ktype in (84, 96):       # DIR_ITEM, DIR_INDEX: 30-byte header, name
            pos = off + 27
        elif ktype == 12:           # INODE_REF: index, name_len, name
            pos = off + 8
        else:
            continue
        name_len = int.from_bytes(block[pos:pos + 2], 'little')
        name = off + size - name_len if ktype == 12 else pos + 3
        if name_len == len(old) and block[name:name + name_len] == old:
            block[name:name + name_len] = new
            hit = True
    return hit


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'manifest':
        manifest(sys.argv[2])
    elif cmd == 'rename':
        rename(*sys.argv[2:6])
    else:
        sys.exit('unknown command ' + cmd)
