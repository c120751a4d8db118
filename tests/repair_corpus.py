#!/usr/bin/env python3
"""btrfs check --repair on copies of the corpus images (damaged, fuzzed, odd).

For each image: no crash, hang or sanitizer report; a repair that fails (exit 1
with nothing written) leaves the image byte for byte as it was; one that wrote
leaves a filesystem no worse: the reference check finds no error it did not find
before (the numbers in its lines aside; nothing is compared where it could not open the
filesystem before) and the kernel mounts it when it mounted it before, and reads every
file then.
usage: repair_corpus.py BOX CORPUS_DIR TMPDIR [all]
Without "all", every fourth image (a different quarter each day)."""
import os, re, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from image_sum import content_sum  # noqa: E402
from rescue_corpus import REF, images, unpack  # noqa: E402


def ref_errors(img):
    """The reference check's exit code and its lines, without numbers."""
    try:
        r = subprocess.run([REF, "check", img], capture_output=True, timeout=300)
    except subprocess.TimeoutExpired:
        return 124, set()
    text = (r.stdout + r.stderr).decode(errors="replace")
    lines = {re.sub(r"\d+", "N", l.strip()) for l in text.splitlines()}
    return r.returncode, {l for l in lines if l and not l.startswith(("Opening", "Checking", "UUID", "[",
                                                                    "found", "total", "btree", "file data",
                                                                    "referenced"))}


def fewer_words(line, before):
    """An inode's line that lost some of its words (errors fixed) is not a new error."""
    head, _, words = line.partition(", ")
    if " inode " not in head or not words:
        return False
    return any(b.partition(", ")[0] == head and set(words.split(", ")) < set(b.partition(", ")[2].split(", "))
               for b in before)


def mounts(img, mnt):
    """None: the kernel refuses it; else whether every file could be read."""
    r = subprocess.run(["mount", "-o", "loop,ro", "-t", "btrfs", img, mnt], capture_output=True, timeout=120)
    if r.returncode:
        return None
    try:
        ok = subprocess.run(["sh", "-c", 'find "$1" -type f -exec cat {} + > /dev/null', "sh", mnt],
                            capture_output=True, timeout=300).returncode == 0
    finally:
        subprocess.run(["umount", mnt], capture_output=True, timeout=120)
    return ok


def main():
    box, corpus, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
    every = len(sys.argv) > 4 and sys.argv[4] == "all"
    day = int(time.time() // 86400)
    mnt = os.path.join(tmp, "corpus.mnt")
    os.makedirs(mnt, exist_ok=True)
    fails, counts = [], {"repaired": 0, "partly": 0, "refused": 0}
    for n, (name, size, _clean) in enumerate(images(corpus)):
        if not every and (n + day) % 4:
            continue
        img = os.path.join(tmp, "corpus.img")
        if not unpack(corpus, name, size, img):
            continue
        before = content_sum(img)
        rc0, err0 = ref_errors(img)
        mounted0 = mounts(img, mnt) if size < (8 << 30) else None
        try:
            r = subprocess.run([box, "btrfs", "check", "--repair", "--force", "--no-undo", "--tmpdir", tmp, img],
                               capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
            rc, out = r.returncode, (r.stdout + r.stderr).decode(errors="replace")
        except subprocess.TimeoutExpired:
            rc, out = 124, "timeout"
        changed = content_sum(img) != before
        if rc not in (0, 1) or re.search(r"Sanitizer|runtime error", out):
            fails.append("%s: exit %d: %s" % (name, rc, out.strip()[-300:]))
        elif not changed:
            counts["refused"] += 1
        else:
            rc1, err1 = ref_errors(img)
            # a v1 space cache is left to the kernel to make anew after any write (as
            # the reference's own repair leaves it): not an error
            new = sorted(l for l in err1 - err0 if not fewer_words(l, err0) and "space cache will be invalidated" not in l)
            # what the reference could not open before it could not judge: the errors it
            # finds after the repair were hidden, not made (the kernel and the files judge)
            if any("cannot open file system" in l for l in err0):
                new = []
            mounted1 = mounts(img, mnt) if mounted0 is not None else None
            if rc1 and new:
                fails.append("%s: the reference check finds new errors after the repair: %s" % (name, new[:3]))
            elif mounted0 is not None and mounted1 is None:
                fails.append("%s: the kernel mounted it before the repair, not after" % name)
            elif mounted0 and not mounted1:
                fails.append("%s: files that could be read before cannot be read after" % name)
            else:
                counts["repaired" if rc1 == 0 else "partly"] += 1
        os.unlink(img)
    for f in fails:
        print("  " + f)
    print("repair corpus: %d repaired, %d partly, %d refused, %d failures" %
          (counts["repaired"], counts["partly"], counts["refused"], len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
