#!/usr/bin/env python3
"""The content checksum of an image file, read without its holes.

usage: image_sum.py FILE...   (prints one sha256 per file)
Blocks of zeros count as holes: a hole and the zeros written into it (an undo file
putting an unused block back) give the same sum, as they would for sha256sum, which
reads the whole file (256 MiB of mostly holes per image: half the test run's time)."""
import hashlib, os, sys

BLOCK = 4096


def data_regions(path):
    """The data regions of a sparse file (holes skipped): (offset, bytes) pieces of
    at most 1 MiB, then (size, None)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        end, pos = os.fstat(fd).st_size, 0
        while pos < end:
            try:
                pos = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError:
                break
            stop = os.lseek(fd, pos, os.SEEK_HOLE)
            while pos < stop:
                chunk = os.pread(fd, min(1 << 20, stop - pos), pos)
                if not chunk:
                    break
                yield pos, chunk
                pos += len(chunk)
        yield end, None
    finally:
        os.close(fd)


def content_sum(path):
    """sha256 over the offsets and bytes of every block that is not all zeros, and the size."""
    h = hashlib.sha256()
    zero = bytes(BLOCK)
    for pos, chunk in data_regions(path):
        if chunk is None:
            h.update(b"size %d" % pos)
        elif chunk.count(0) != len(chunk):
            for i in range(0, len(chunk), BLOCK):
                block = chunk[i:i + BLOCK]
                if block != zero[:len(block)]:
                    h.update(b"%d:" % (pos + i) + block)
    return h.hexdigest()


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(content_sum(name))
