#!/usr/bin/env python3
"""Power-cut harness: is every image a cut could leave the old or the new filesystem?

Runs a command on a copy of an image with BTRFSBOX_WRITE_LOG set (util/pio.h: every
device write and flush of btrfsbox is recorded), then builds the images a power cut
would leave: after each write k, with all writes before k on disk, with only those up
to the last flush (the disk cache lost), and with one or more of the unflushed ones
lost (the disk wrote them out of order). Each image must be the old filesystem or
the new one: the same verdict of the reference `btrfs check` and of a kernel mount
(read-only), and the same files (names, types, sizes, contents) as one of the two.

usage: crash.py [--all] [--samples N] [--seed S] [--or-image IMG] [--finish CMD] --image IMG [--image IMG2...] -- CMD...
In CMD, @IMG0@, @IMG1@... name the copies the command works on (@IMG@ = @IMG0@).
--all checks every cut point and every single lost write (make crashtest); without
it a sample of cut points (those next to the flushes, where the superblocks are
written, and random ones) and one random loss per point. --or-image adds a third
acceptable state (mkfs over an old filesystem: wiped, no filesystem at all). --finish
CMD (one argument, words split at spaces, @IMG@ the cut image) is for a command whose
cut short state is finished by running it again (btrfstune -U): an image neither old
nor new must be the new one after CMD.
Exit 0 when all are fine; with CRASH_COUNT_FILE set, the number of cut images checked is
appended to that file."""
import os, random, re, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from restore_helper import entries  # noqa: E402 (names, types, sizes, contents of a tree)

REF = os.environ.get("REF_BTRFS", "/usr/bin/btrfs")


def run(cmd, timeout=120, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, b"", b"timeout")


def read_log(path):
    """[(kind, devpath, offset, data)]: kind 'W' (write) or 'F' (flush)."""
    out = []
    with open(path, "rb") as f:
        blob = f.read()
    pos = 0
    while pos < len(blob):
        nl = blob.index(b"\n", pos)
        head = blob[pos:nl].decode()
        pos = nl + 1
        if head.startswith("F "):
            out.append(("F", head[2:], 0, b""))
            continue
        m = re.match(r"W (.*) (\d+) (\d+)$", head)
        n = int(m.group(3))
        out.append(("W", m.group(1), int(m.group(2)), blob[pos:pos + n]))
        pos += n
    return out


class Judge:
    def __init__(self, tmp):
        self.tmp = tmp
        self.mnt = os.path.join(tmp, "mnt")
        os.makedirs(self.mnt, exist_ok=True)

    def state(self, imgs):
        """What the reference check and the kernel say of the images, comparable."""
        names = {p: "@IMG%d@" % i for i, p in enumerate(imgs)}
        r = run([REF, "check"] + imgs[:1])
        text = (r.stdout + r.stderr).decode(errors="replace")
        for p, n in names.items():
            text = text.replace(p, n)
        text = re.sub(r"/dev/loop\d+", "LOOP", text)
        loops = []
        for p in imgs:
            lo = run(["losetup", "-f", "--show", "-r", p])
            if lo.returncode:
                raise RuntimeError("losetup failed: " + lo.stderr.decode())
            loops.append(lo.stdout.decode().strip())
        opts = "ro" + "".join(",device=" + d for d in loops)
        m = run(["mount", "-t", "btrfs", "-o", opts, loops[0], self.mnt])
        files = None
        if m.returncode == 0:
            try:
                files = entries(self.mnt)
            finally:
                run(["umount", self.mnt])
        for d in loops:
            run(["losetup", "-d", d])
        return (r.returncode, text, m.returncode == 0, files)


def cut_images(orig, work_of, log, tmp, upto, lost):
    """Copies of the originals with writes [0, upto) applied except the lost ones."""
    imgs = []
    for i, o in enumerate(orig):
        p = os.path.join(tmp, "cut%d.img" % i)
        run(["cp", "--sparse=always", o, p])
        imgs.append(p)
    fds = {}
    try:
        for k in range(upto):
            kind, dev, off, data = log[k]
            if kind != "W" or k in lost:
                continue
            idx = work_of.get(dev)
            if idx is None:
                continue        # not a device of the filesystem (a temporary file)
            if idx not in fds:
                fds[idx] = os.open(imgs[idx], os.O_WRONLY)
            os.pwrite(fds[idx], data, off)
    finally:
        for fd in fds.values():
            os.close(fd)
    return imgs


def unflushed(log, k):
    """Writes before k made since the last flush of their device."""
    pending = {}
    for i in range(k):
        kind, dev = log[i][0], log[i][1]
        if kind == "F":
            pending[dev] = []
        else:
            pending.setdefault(dev, []).append(i)
    return [i for v in pending.values() for i in v]


def main():
    args = sys.argv[1:]
    sep = args.index("--")
    opts, cmd = args[:sep], args[sep + 1:]
    images, extra, every, samples, seed, finish = [], [], False, 6, 1, None
    i = 0
    while i < len(opts):
        if opts[i] == "--image":
            images.append(opts[i + 1]); i += 2
        elif opts[i] == "--or-image":
            extra.append(opts[i + 1]); i += 2
        elif opts[i] == "--finish":
            finish = opts[i + 1].split(); i += 2
        elif opts[i] == "--all":
            every = True; i += 1
        elif opts[i] == "--samples":
            samples = int(opts[i + 1]); i += 2
        elif opts[i] == "--seed":
            seed = int(opts[i + 1]); i += 2
        else:
            sys.exit("crash.py: unknown option " + opts[i])
    rnd = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="btrfsbox-crash.", dir=os.environ.get("TMPDIR", "/var/tmp"))
    try:
        work = []
        for n, img in enumerate(images):
            p = os.path.join(tmp, "work%d.img" % n)
            run(["cp", "--sparse=always", img, p])
            work.append(p)
        subst = {"@IMG@": work[0]}
        subst.update({"@IMG%d@" % n: p for n, p in enumerate(work)})
        logf = os.path.join(tmp, "write.log")
        argv = [subst.get(a, a) for a in cmd]
        env = dict(os.environ, BTRFSBOX_WRITE_LOG=logf)
        r = run(argv, env=env, timeout=600)
        if r.returncode not in (0, 2):   # super-recover says 2 when it recovered
            print("crash: the command failed (%d): %s" % (r.returncode, r.stderr.decode()[-300:]))
            return 1
        log = read_log(logf) if os.path.exists(logf) else []
        work_of = {os.path.realpath(p): n for n, p in enumerate(work)}
        work_of.update({p: n for n, p in enumerate(work)})
        judge = Judge(tmp)
        old, new = judge.state(list(images)), judge.state(work)
        others = [judge.state([e]) for e in extra]
        if new[0] != 0 or not new[2]:
            print("crash: the new filesystem is not valid (check %d, mount %s): %s" %
                  (new[0], new[2], new[1][-400:]))
            return 1
        nw = len(log)
        points = list(range(nw + 1))
        if not every:
            flush = [k for k in range(nw) if log[k][0] == "F"]
            near = {k for f in flush for k in (f, f + 1, f - 1) if 0 <= k <= nw}
            near |= {0, nw}
            rest = [k for k in points if k not in near]
            points = sorted(near if len(near) <= samples else rnd.sample(sorted(near), samples)) + \
                sorted(rnd.sample(rest, min(len(rest), max(1, samples // 3))))
        checked = 0
        for k in sorted(set(points)):
            pend = unflushed(log, k)
            variants = [set()]
            if pend:
                variants.append(set(pend))
                if every:
                    variants += [{u} for u in pend] + [set(pend) - {u} for u in pend]
                else:
                    variants.append(set(rnd.sample(pend, rnd.randint(1, len(pend)))))
            seen = set()
            for lost in variants:
                key = frozenset(lost)
                if key in seen:
                    continue
                seen.add(key)
                imgs = cut_images(images, work_of, log, tmp, k, lost)
                st = judge.state(imgs)
                checked += 1
                if st != old and st != new and st not in others and finish:
                    run([imgs[0] if a == "@IMG@" else a for a in finish])
                    st = judge.state(imgs)
                if st != old and st != new and st not in others:
                    which = "check rc %d, mount %s" % (st[0], st[2])
                    print("crash: cut after write %d of %d, %d unflushed lost: neither the old nor the new "
                          "filesystem (%s)\n%s" % (k, nw, len(lost), which, st[1][-600:]))
                    return 1
        print("crash: %d writes, %d cut images, each the old or the new filesystem" % (nw, checked))
        if os.environ.get("CRASH_COUNT_FILE"):      # make crashtest adds them up
            with open(os.environ["CRASH_COUNT_FILE"], "a") as f:
                f.write("%d\n" % checked)
        return 0
    finally:
        subprocess.run(["umount", os.path.join(tmp, "mnt")], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
