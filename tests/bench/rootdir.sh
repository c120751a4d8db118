# The --rootdir input of the mkfs benchmarks (sourced after tests/bench/lib.sh):
# bench_rootdir_tree sets SRC to a generated tree, about 52k entries and 1 GiB, made
# once (fixed seed) under BENCH_DIR, and reads it into the page cache.
# bench_rootdir_many sets SRC to 100k files of 2-6 KiB (each its own data extent,
# about 600 MiB), made and warmed the same way.
ROOTDIR_VERSION=1

bench_rootdir_tree() {
	SRC=$BENCH_DIR/rootdir-src
	if [ "$(cat "$SRC.stamp" 2>/dev/null)" != "$ROOTDIR_VERSION" ]; then
		echo "$BENCH_NAME: generating $SRC (once)"
		rm -rf "$SRC" "$SRC.stamp"
		timeout 900 python3 - "$SRC" <<'PY' || return 1
import os, random, sys
root = sys.argv[1]
rng = random.Random(4242)
words = b"alpha beta gamma delta extent inode chunk tree leaf node csum root".split()
text = b" ".join(rng.choice(words) for _ in range(300000))
def blob(n):
    if rng.random() < 0.6:
        off = rng.randrange(0, len(text) - n - 1)
        return text[off:off + n]
    return rng.randbytes(n)
files = []
os.makedirs(root)
for a in range(20):
    for b in range(25):
        d = os.path.join(root, "d%02d" % a, "s%02d" % b)
        os.makedirs(d)
        for i in range(100):
            p = os.path.join(d, "file-%03d" % i)
            r = rng.random()
            n = rng.randrange(0, 2048) if r < 0.3 else rng.randrange(2048, 8192) if r < 0.9 else rng.randrange(8192, 32768)
            with open(p, "wb") as f:
                f.write(blob(n))
            files.append(p)
big = os.path.join(root, "big")
os.makedirs(big)
for i in range(16):
    with open(os.path.join(big, "big-%02d" % i), "wb") as f:
        for _ in range(48):
            f.write(rng.randbytes(1 << 20) if i % 2 else text[:1 << 20])
links = os.path.join(root, "links")
os.makedirs(links)
for i in range(1000):
    os.link(files[i * 37], os.path.join(links, "hard-%04d" % i))
    os.symlink(os.path.relpath(files[i * 41], links), os.path.join(links, "sym-%04d" % i))
for i in range(200):
    os.setxattr(files[i * 113], "user.bench", b"value-%d" % i)
with open(os.path.join(root, "sparse"), "wb") as f:
    for off in (0, 100 << 20, (256 << 20) - 4096):
        f.seek(off)
        f.write(blob(4096))
PY
		echo "$ROOTDIR_VERSION" > "$SRC.stamp"
	fi
	(cd "$SRC" && timeout 600 tar -cf - . | cat > /dev/null)
}

bench_rootdir_many() {
	SRC=$BENCH_DIR/rootdir-many
	if [ "$(cat "$SRC.stamp" 2>/dev/null)" != 1 ]; then
		echo "$BENCH_NAME: generating $SRC (once)"
		rm -rf "$SRC" "$SRC.stamp"
		timeout 900 python3 - "$SRC" <<'PY' || return 1
import os, random, sys
root = sys.argv[1]
rng = random.Random(7)
blob = rng.randbytes(1 << 20)
for a in range(100):
    d = os.path.join(root, "d%03d" % a)
    os.makedirs(d)
    for i in range(1000):
        n = rng.randrange(2100, 6000)
        off = rng.randrange(0, len(blob) - n)
        with open(os.path.join(d, "f%04d" % i), "wb") as f:
            f.write(blob[off:off + n])
PY
		echo 1 > "$SRC.stamp"
	fi
	(cd "$SRC" && timeout 600 tar -cf - . | cat > /dev/null)
}
