#!/usr/bin/env python3
"""Every rescue command on copies of the corpus images (damaged, fuzzed, odd).

For each run: no crash, hang or sanitizer report; a command that fails leaves the
image byte for byte as it was; one that changes a clean image (the reference check
passed on it) leaves it clean.
usage: rescue_corpus.py BOX CORPUS_DIR TMPDIR [all]
Without "all", each image gets two of the commands (a different pair per image)."""
import os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from image_sum import content_sum  # noqa: E402

COMMANDS = [["rescue", "zero-log"], ["rescue", "super-recover", "-y"], ["rescue", "fix-device-size"],
            ["rescue", "clear-uuid-tree"], ["rescue", "clear-space-cache", "v1"],
            ["rescue", "clear-space-cache", "v2"], ["rescue", "clear-ino-cache"],
            ["filesystem", "label", "@IMG@", "corpus"]]
REF = os.environ.get("REF_BTRFS", "/usr/bin/btrfs")


def images(corpus):
    """(name, size, clean) of every btrfs-ish corpus image."""
    out = []
    with open(os.path.join(corpus, "manifest.tsv")) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            row = dict(zip(head, line.rstrip("\n").split("\t")))
            if row.get("kind") in ("stream",):
                continue
            out.append((row["name"], int(row["raw_size_bytes"]), row.get("ref_check_rc") == "0"))
    return out


def unpack(corpus, name, size, dst):
    raw = "/var/tmp/corpus/%s.raw" % name
    if os.path.exists(raw):
        return subprocess.run(["cp", "--sparse=always", raw, dst]).returncode == 0
    src = os.path.join(corpus, "images", name + ".raw.zst")
    if not os.path.exists(src) or subprocess.run(["zstd", "-d", "-q", "-f", src, "-o", dst]).returncode:
        return False
    os.truncate(dst, size)
    return True


def main():
    box, corpus, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
    every = len(sys.argv) > 4 and sys.argv[4] == "all"
    fails, runs = [], 0
    for n, (name, size, clean) in enumerate(images(corpus)):
        cmds = COMMANDS if every else [COMMANDS[n % len(COMMANDS)], COMMANDS[(n + 3) % len(COMMANDS)]]
        for cmd in cmds:
            img = os.path.join(tmp, "corpus.img")
            if not unpack(corpus, name, size, img):
                break
            before = content_sum(img)
            argv = [box, "btrfs"] + [img if a == "@IMG@" else a for a in cmd]
            if "@IMG@" not in cmd:
                argv.append(img)
            try:
                r = subprocess.run(argv, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
                rc, err = r.returncode, (r.stdout + r.stderr).decode(errors="replace")
            except subprocess.TimeoutExpired:
                rc, err = 124, "timeout"
            runs += 1
            what = "%s on %s" % (" ".join(cmd), name)
            # super-recover's exit codes say what it did; label fails with 255 (as btrfs-progs)
            ok_rcs = (0, 1, 2, 3, 4) if "super-recover" in cmd else (0, 1, 255) if "label" in cmd else (0, 1)
            if rc not in ok_rcs or re.search(r"Sanitizer|runtime error", err):
                fails.append("%s: exit %d: %s" % (what, rc, err.strip()[-300:]))
            elif rc not in (0, 2) and content_sum(img) != before:
                fails.append("%s: failed (exit %d) but changed the image: %s" % (what, rc, err.strip()[-200:]))
            elif rc in (0, 2) and clean and content_sum(img) != before:
                c = subprocess.run([REF, "check", img], capture_output=True, timeout=300)
                if c.returncode:
                    fails.append("%s: a clean image is no longer clean: %s" %
                                 (what, c.stderr.decode(errors="replace")[-300:]))
            os.unlink(img)
    for f in fails:
        print("  " + f)
    print("rescue corpus: %d runs, %d failures" % (runs, len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
