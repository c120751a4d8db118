#!/usr/bin/env python3
"""Lost writes: tree blocks of a filesystem's last transaction that never reached the
disk, so that their places hold what was there before (a cache that lied about a flush).

usage: lost_write.py BEFORE AFTER MODE [--seed S] [--copy N] [--trees ID,...]
  BEFORE  the image as it was before the last transaction(s) (a copy taken then)
  AFTER   the image after them: changed in place
  MODE    one   one block written by the last transaction
          tree  every such block of one tree (the tree picked at random)
          half  a random half of them
          all   all of them (the superblock alone reached the disk)
Every copy (DUP) of a chosen block gets BEFORE's bytes at its place (--copy N: copy N
alone, counted from 1); --trees: only blocks of these trees are lost. A BEFORE of zeros
stands for places nothing was written to before. Prints what it did."""
import argparse
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import btrfs_image as bi  # noqa: E402

MODES = ("one", "tree", "half", "all")


def tree_blocks(fs):
    """(logical, owner) of every tree block reachable from the superblock."""
    seen, out = set(), []

    def walk(logical):
        if logical in seen:
            return
        seen.add(logical)
        b = fs.read_block(logical)
        owner = struct.unpack_from("<Q", b.b, 88)[0]
        out.append((logical, owner, struct.unpack_from("<Q", b.b, 80)[0]))
        if b.level:
            for slot in range(b.nritems):
                walk(b.child(slot))
        elif owner == 1:        # the root tree: every tree's root
            for slot in range(b.nritems):
                if b.key(slot)[1] == 132:
                    walk(struct.unpack_from("<Q", b.data(slot), 176)[0])
    walk(fs.super_get("root"))
    walk(fs.super_get("chunk_root"))
    return out


def lose(before, after, mode, rnd, copy=None, trees=None):
    """Takes away the writes of AFTER's last transaction as MODE says (of one copy when
    copy is given, of the trees given); returns what it did."""
    fs = bi.Fs(after)
    gen = fs.super_get("generation")
    last = sorted(b for b in tree_blocks(fs) if b[2] == gen and (trees is None or b[1] in trees))
    if not last:
        return None
    if mode == "one":
        chosen = [rnd.choice(last)]
    elif mode == "tree":
        owner = rnd.choice(sorted({b[1] for b in last}))
        chosen = [b for b in last if b[1] == owner]
    elif mode == "half":
        chosen = rnd.sample(last, max(1, len(last) // 2))
    else:
        chosen = last
    with open(before, "rb") as src, open(after, "r+b") as dst:
        for logical, _, _ in chosen:
            places = fs.mirrors(logical)
            for phys in places if copy is None else places[copy - 1:copy]:
                src.seek(phys)
                old = src.read(fs.nodesize)
                dst.seek(phys)
                dst.write(old)
    owners = sorted({b[1] for b in chosen})
    return "lost %d of the %d blocks of generation %d (trees %s)" % (
        len(chosen), len(last), gen, ",".join(str(o if o < 1 << 63 else o - (1 << 64)) for o in owners))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("mode", choices=MODES)
    ap.add_argument("--seed", default="0")
    ap.add_argument("--copy", type=int)
    ap.add_argument("--trees", type=lambda v: {int(t) for t in v.split(",")})
    a = ap.parse_args()
    what = lose(a.before, a.after, a.mode, random.Random(a.seed), a.copy, a.trees)
    if not what:
        raise SystemExit("no tree block of the last generation")
    print(what)


if __name__ == "__main__":
    main()
