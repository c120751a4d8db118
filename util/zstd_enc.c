/* zstd frame encoder, written from RFC 8878 ("Zstandard Compression and the
 * application/zstd Media Type").
 *
 * A frame holds one block (btrfs compresses at most 128 KiB at a time): a compressed
 * block when that is smaller than the input, else an RLE block (one byte repeated) or a
 * raw block. A compressed block is a literals section and a sequences section:
 *  - the sequences (literals length, match length, Offset_Value) come from a greedy or
 *    lazy LZ77 parse over a hash table with hash chains; the level sets the effort.
 *    Offset_Value 1..3 names one of the three most recent offsets (repeat offsets).
 *  - the literals are Huffman coded (codes of at most 11 bits; one stream for fewer
 *    than 256 literals, else four) or stored raw.
 *  - the codes of the three sequence fields are FSE coded with the predefined
 *    distribution, as one repeated code (RLE mode) or with a distribution sent in the
 *    block, whichever is smallest; their extra bits are interleaved in the same stream.
 * Entropy-coded streams are read backwards by the decoder: they are written from the
 * last symbol to the first and end with a 1 bit. */
#include "le.h"
#include "zstd_enc.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IN ZSTD_ENC_MAX_INPUT
#define HASH_LOG 16             /* the largest hash table */
#define MIN_MATCH 4
#define MAX_SEQ (MAX_IN / MIN_MATCH)
#define HUF_MAX_BITS 11
#define FSE_MAX_LOG 9
#define FSE_MAX_SYM 53          /* match length codes 0..52 */
#define WEIGHT_LOG 6            /* accuracy of the FSE table of Huffman weights */

struct seq {
	uint32_t lit;           /* literals before the match */
	uint32_t len;           /* match length */
	uint32_t offval;        /* Offset_Value: 1..3 a repeat offset, else offset + 3 */
};

/* Codes of literals lengths or match lengths - 3: the code of a value below 128 (above,
 * it follows from the highest bit), and each code's baseline and extra bits. */
struct len_codes {
	uint8_t code[128];
	uint8_t nb[FSE_MAX_SYM];
	uint32_t base[FSE_MAX_SYM];
};

struct zenc {
	uint32_t head[1 << HASH_LOG];   /* hash of the bytes at a position -> last such position */
	uint32_t chain[MAX_IN];         /* position -> previous position with the same hash */
	struct seq seq[MAX_SEQ];
	uint8_t lit[MAX_IN];
	struct len_codes ll_codes, ml_codes;
};

/* Match finder effort of a level. */
struct effort {
	uint8_t hash_log;       /* hash table entries: 2^hash_log */
	uint8_t hash_len;       /* bytes hashed */
	uint8_t lazy;           /* later starts tried for a better match */
	uint8_t skip_log;       /* without matches, the step grows by 1 every 2^skip_log bytes */
	uint16_t depth;         /* chain candidates tried */
	uint16_t nice;          /* a match this long ends the search */
};

static const struct effort efforts[] = {
	{ 15, 5, 0, 5, 1, 32 },         /* level 1: greedy, the hash table alone */
	{ 15, 5, 0, 6, 2, 32 },         /* 2 */
	{ 16, 5, 1, 6, 4, 48 },         /* 3-4: lazy */
	{ 16, 4, 1, 7, 16, 96 },        /* 5-7 */
	{ 16, 4, 2, 8, 48, 192 },       /* 8-11: two later starts tried */
	{ 16, 4, 2, 9, 256, 1024 },     /* 12-15 */
};
static const uint8_t effort_of_level[16] = { 0, 0, 1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5 };

static unsigned hb(uint32_t v)          /* index of the highest set bit; v > 0 */
{
	return 31 - (unsigned)__builtin_clz(v);
}

/* ---- LZ77 parse ------------------------------------------------------------ */

struct parse {
	struct zenc *z;
	const struct effort *e;
	const uint8_t *in;
	uint32_t n;
	uint32_t anchor;        /* first byte not yet in a sequence */
	uint32_t next_ins;      /* first position not yet in the hash chains */
	uint32_t rep[3];        /* repeat offsets, most recent first */
};

struct match {
	uint32_t len, off;
	int gain;
};

static uint32_t hash_at(const struct parse *ps, uint32_t pos)
{
	uint64_t v = get_le64(ps->in + pos) << (64 - 8 * ps->e->hash_len);
	return (uint32_t)((v * 0x9E3779B185EBCA87ull) >> (64 - ps->e->hash_log));
}

/* Length of the common prefix of a and b (a < b), up to end. */
static uint32_t match_len(const uint8_t *a, const uint8_t *b, const uint8_t *end)
{
	const uint8_t *start = b;

	for (; end - b >= 8; a += 8, b += 8) {
		uint64_t x = get_le64(a) ^ get_le64(b);
		if (x)
			return (uint32_t)(b - start) + (unsigned)__builtin_ctzll(x) / 8;
	}
	while (b < end && *a == *b)
		a++, b++;
	return (uint32_t)(b - start);
}

/* Offset_Value of a match at offset off after lit literals. With no literals, the
 * repeat codes name the second and third offsets, and the first one minus 1. */
static uint32_t offval_of(const uint32_t *rep, uint32_t off, uint32_t lit)
{
	if (lit && off == rep[0])
		return 1;
	if (off == rep[1])
		return 2 - !lit;
	if (off == rep[2])
		return 3 - !lit;
	if (!lit && off == rep[0] - 1)
		return 3;
	return off + 3;
}

/* The repeat offsets after a match, as the decoder updates them. */
static void rep_update(uint32_t *rep, uint32_t off, uint32_t offval, uint32_t lit)
{
	if (offval == 1 && lit)
		return;
	if (off != rep[1])
		rep[2] = rep[1];
	rep[1] = rep[0];
	rep[0] = off;
}

/* Bytes saved (x4) minus the offset's extra bits: how the candidates compare. */
static int gain_of(uint32_t len, uint32_t offval)
{
	return (int)(4 * len) - (int)hb(offval);
}

static void consider(const struct parse *ps, struct match *m, uint32_t pos, uint32_t len, uint32_t off)
{
	int gain = gain_of(len, offval_of(ps->rep, off, pos - ps->anchor));

	if (len >= MIN_MATCH && gain > m->gain)
		*m = (struct match){ len, off, gain };
}

/* Adds the positions before pos to the hash chains. */
static void insert_upto(struct parse *ps, uint32_t pos)
{
	for (; ps->next_ins < pos; ps->next_ins++) {
		uint32_t h = hash_at(ps, ps->next_ins);
		ps->z->chain[ps->next_ins] = ps->z->head[h];
		ps->z->head[h] = ps->next_ins;
	}
}

/* The best match at pos (len 0: none): the first two repeat offsets, then the hash
 * chain, nearest first. pos + 8 <= n. */
static struct match find(struct parse *ps, uint32_t pos)
{
	struct zenc *z = ps->z;
	const uint8_t *cur = ps->in + pos, *end = ps->in + ps->n;
	struct match m = { 0, 0, 0 };
	uint32_t h, cand, lim = ps->n - pos, depth = ps->e->depth;

	if (lim > ps->e->nice)
		lim = ps->e->nice;
	for (int i = 0; i < 2; i++) {
		uint32_t r = ps->rep[i];
		if (r <= pos && get_le32(cur - r) == get_le32(cur))
			consider(ps, &m, pos, match_len(cur - r, cur, end), r);
	}
	insert_upto(ps, pos);
	h = hash_at(ps, pos);
	cand = z->head[h];
	if (ps->next_ins == pos) {
		z->chain[pos] = cand;
		z->head[h] = pos;
		ps->next_ins++;
	}
	while (cand < pos && m.len < lim) {
		const uint8_t *c = ps->in + cand;
		uint32_t next;

		if (c[m.len] == cur[m.len] && get_le32(c) == get_le32(cur))
			consider(ps, &m, pos, match_len(c, cur, end), pos - cand);
		if (!--depth || (next = z->chain[cand]) >= cand)
			break;          /* chains go back; an untouched entry ends one */
		cand = next;
	}
	return m;
}

/* Splits in into sequences (z->seq) and literals (z->lit, *nlit of them). */
static uint32_t parse(struct zenc *z, const struct effort *e, const uint8_t *in, uint32_t n,
		      uint32_t *nlit)
{
	struct parse ps = { z, e, in, n, 0, 0, { 1, 4, 8 } };
	uint32_t pos = 0, nseq = 0;

	memset(z->head, 0, sizeof(z->head[0]) << e->hash_log);
	*nlit = 0;
	while (n >= 8 && pos <= n - 8) {
		struct match m = find(&ps, pos);
		uint32_t lit;

		if (!m.len) {
			pos += 1 + ((pos - ps.anchor) >> e->skip_log);
			ps.next_ins = pos;      /* the skipped bytes stay out of the chains */
			continue;
		}
		for (unsigned k = 0; k < e->lazy && pos + 1 <= n - 8; k++) {
			struct match later = find(&ps, pos + 1);
			if (later.gain <= m.gain + 4)   /* one more literal must pay */
				break;
			m = later;
			pos++;
		}
		while (pos > ps.anchor && m.off < pos && in[pos - 1] == in[pos - 1 - m.off]) {
			pos--;
			m.len++;
		}
		lit = pos - ps.anchor;
		memcpy(z->lit + *nlit, in + ps.anchor, lit);
		*nlit += lit;
		z->seq[nseq] = (struct seq){ lit, m.len, offval_of(ps.rep, m.off, lit) };
		rep_update(ps.rep, m.off, z->seq[nseq++].offval, lit);
		pos += m.len;
		ps.anchor = pos;
	}
	memcpy(z->lit + *nlit, in + ps.anchor, n - ps.anchor);
	*nlit += n - ps.anchor;
	return nseq;
}

/* ---- bit streams ----------------------------------------------------------- */

/* Little-endian bit stream; full is set when it ran past end. */
struct bits {
	uint8_t *p, *end;
	uint64_t acc;
	unsigned n;
	int full;
};

static void bits_flush(struct bits *b)
{
	for (; b->n >= 8; b->n -= 8, b->acc >>= 8) {
		if (b->p < b->end)
			*b->p++ = (uint8_t)b->acc;
		else
			b->full = 1;
	}
}

static void put_bits(struct bits *b, uint32_t v, unsigned nb)     /* nb <= 24 */
{
	b->acc |= (uint64_t)(v & ((1u << nb) - 1)) << b->n;
	b->n += nb;
	if (b->n < 32)
		return;
	if (b->end - b->p < 4) {
		bits_flush(b);
		return;
	}
	put_le32(b->p, (uint32_t)b->acc);
	b->p += 4;
	b->acc >>= 32;
	b->n -= 32;
}

/* Ends the stream (with the final 1 bit of a backward stream when mark); returns its
 * size in bytes, 0 when it did not fit. */
static size_t bits_end(struct bits *b, const uint8_t *start, int mark)
{
	if (mark)
		put_bits(b, 1, 1);
	b->n += 7;
	bits_flush(b);
	return b->full ? 0 : (size_t)(b->p - start);
}

/* Little-endian field of nbytes bytes. */
static void put_le(uint8_t *p, uint64_t v, unsigned nbytes)
{
	while (nbytes--) {
		*p++ = (uint8_t)v;
		v >>= 8;
	}
}

/* ---- FSE ------------------------------------------------------------------- */

/* Encoding table: the states (plus the table size) whose cell holds a symbol, listed by
 * symbol, each symbol's in increasing order. */
struct fse {
	unsigned log;
	uint16_t cells[FSE_MAX_SYM];    /* cells of a symbol: its probability times 2^log */
	uint16_t first[FSE_MAX_SYM];    /* index of its first state in state[] */
	uint16_t state[1 << FSE_MAX_LOG];
};

/* The decoder's table layout for a normalized distribution (-1: "less than one", one
 * cell at the end of the table): cells spread over the table with a fixed step. */
static void fse_build(struct fse *t, const int16_t *norm, unsigned nsym, unsigned log)
{
	unsigned size = 1u << log, high = size - 1, step = (size >> 1) + (size >> 3) + 3, pos = 0;
	uint16_t next[FSE_MAX_SYM], total = 0;
	uint8_t cell[1 << FSE_MAX_LOG];

	t->log = log;
	for (unsigned s = 0; s < nsym; s++) {
		t->cells[s] = norm[s] < 0 ? 1 : (uint16_t)norm[s];
		next[s] = t->first[s] = total;
		total += t->cells[s];
		if (norm[s] < 0)
			cell[high--] = (uint8_t)s;
	}
	for (unsigned s = 0; s < nsym; s++)
		for (int k = 0; k < norm[s]; k++) {
			cell[pos] = (uint8_t)s;
			do
				pos = (pos + step) & (size - 1);
			while (pos > high);
		}
	for (pos = 0; pos < size; pos++)
		t->state[next[cell[pos]]++] = (uint16_t)(size + pos);
}

/* Encodes symbol s from state *x (the state the decoder reaches after s): writes the
 * bits the decoder reads to get there and moves *x to a state decoding s. */
static void fse_put(struct bits *b, const struct fse *t, unsigned *x, unsigned s)
{
	unsigned c = t->cells[s], nb = t->log - hb(c);

	nb -= *x < c << nb;
	put_bits(b, *x, nb);
	*x = t->state[t->first[s] + (*x >> nb) - c];
}

/* A first state for symbol s: its lowest, which reads at least one bit when there are
 * two symbols or more (the Huffman weight stream's end relies on it). */
static unsigned fse_init(const struct fse *t, unsigned s)
{
	return t->state[t->first[s]];
}

/* log2(v) in 1/256 bits, interpolated. */
static uint32_t log2_fp(uint32_t v)
{
	unsigned h = hb(v);
	return (h << 8) + (((v << 8) >> h) & 255);
}

/* Approximate bits (x256) to code the symbols counted in cnt with distribution norm,
 * which has cells for each of them. */
static uint32_t fse_cost(const uint32_t *cnt, const int16_t *norm, unsigned nsym, unsigned log)
{
	uint32_t bits = 0;

	for (unsigned s = 0; s < nsym; s++)
		if (cnt[s])
			bits += cnt[s] * ((log << 8) - log2_fp(norm[s] < 0 ? 1 : (uint32_t)norm[s]));
	return bits;
}

/* Scales counts (total of them, two symbols or more) to 2^log cells, each counted
 * symbol getting one at least; the rounding error goes where it costs least. */
static void fse_normalize(int16_t *norm, const uint32_t *cnt, unsigned nsym, uint32_t total, unsigned log)
{
	int size = 1 << log, sum = 0;

	for (unsigned s = 0; s < nsym; s++) {
		norm[s] = (int16_t)((cnt[s] * (uint64_t)size + total / 2) / total);
		if (cnt[s] && !norm[s])
			norm[s] = 1;
		sum += norm[s];
	}
	while (sum != size) {
		int dir = sum < size ? 1 : -1;
		unsigned best = nsym;
		for (unsigned s = 0; s < nsym; s++) {
			/* a cell more goes to the highest count per cell, a cell less to the lowest */
			if (!cnt[s] || norm[s] + dir < 1)
				continue;
			if (best == nsym || (dir > 0 ? (uint64_t)cnt[s] * norm[best] > (uint64_t)cnt[best] * norm[s]
						     : (uint64_t)cnt[s] * norm[best] < (uint64_t)cnt[best] * norm[s]))
				best = s;
		}
		norm[best] = (int16_t)(norm[best] + dir);
		sum += dir;
	}
}

/* FSE table description: accuracy log, then each probability + 1 in as few bits as the
 * probability left allows; a zero probability is followed by 2-bit counts of more zeros. */
static size_t fse_header(uint8_t *p, uint8_t *end, const int16_t *norm, unsigned log)
{
	struct bits b = { p, end, 0, 0, 0 };
	int left = (1 << log) + 1, threshold = 1 << log, nb = (int)log + 1;
	unsigned s = 0;

	put_bits(&b, log - 5, 4);
	while (left > 1) {
		int v = norm[s] + 1, max = 2 * threshold - 1 - left;

		left -= norm[s] < 0 ? -norm[s] : norm[s];
		if (v >= threshold)
			v += max;
		put_bits(&b, (uint32_t)v, (unsigned)(nb - (v < max)));
		while (left < threshold) {
			nb--;
			threshold >>= 1;
		}
		if (!norm[s++]) {
			unsigned zeros = s;
			while (!norm[s])
				s++;
			for (zeros = s - zeros; zeros >= 3; zeros -= 3)
				put_bits(&b, 3, 2);
			put_bits(&b, zeros, 2);
		}
	}
	return bits_end(&b, p, 0);
}

/* ---- literals ---------------------------------------------------------------- */

/* Code lengths of a minimum-redundancy code, in place (Moffat and Katajainen): a[0..n-1]
 * (n >= 2) holds weights in increasing order, then the lengths (a[0] the longest). */
static void huf_depths(uint32_t *a, int n)
{
	int root = 0, leaf = 2, next, avail = 1, used = 0, depth = 0;

	a[0] += a[1];
	for (next = 1; next < n - 1; next++) {     /* internal nodes, holding their parent */
		if (leaf >= n || a[root] < a[leaf]) {
			a[next] = a[root];
			a[root++] = (uint32_t)next;
		} else {
			a[next] = a[leaf++];
		}
		if (leaf >= n || (root < next && a[root] < a[leaf])) {
			a[next] += a[root];
			a[root++] = (uint32_t)next;
		} else {
			a[next] += a[leaf++];
		}
	}
	a[n - 2] = 0;                           /* depths of the internal nodes */
	for (next = n - 3; next >= 0; next--)
		a[next] = a[a[next]] + 1;
	root = n - 2;                           /* depths of the leaves */
	next = n - 1;
	while (avail > 0) {
		for (; root >= 0 && a[root] == (uint32_t)depth; root--)
			used++;
		for (; avail > used; avail--)
			a[next--] = (uint32_t)depth;
		avail = 2 * used;
		depth++;
		used = 0;
	}
}

/* Huffman code lengths of at most HUF_MAX_BITS (len[s], 0 for absent symbols) for two or
 * more counted symbols: rare symbols count as more frequent until the code fits. */
static unsigned huf_lengths(const uint32_t *cnt, unsigned nsym, uint32_t total, uint8_t *len)
{
	uint8_t sym[256];
	uint32_t a[256], floor = 0;
	int n = 0;

	for (unsigned s = 0; s < nsym; s++) {         /* counted symbols, rarest first */
		int j = n;
		if (!cnt[s])
			continue;
		for (; j > 0 && cnt[sym[j - 1]] > cnt[s]; j--)
			sym[j] = sym[j - 1];
		sym[j] = (uint8_t)s;
		n++;
	}
	for (;;) {
		for (int i = 0; i < n; i++)
			a[i] = cnt[sym[i]] > floor ? cnt[sym[i]] : floor;
		huf_depths(a, n);
		if (a[0] <= HUF_MAX_BITS)
			break;
		floor = floor ? 2 * floor : (total >> HUF_MAX_BITS) + 1;
	}
	memset(len, 0, nsym);
	for (int i = 0; i < n; i++)
		len[sym[i]] = (uint8_t)a[i];
	return a[0];
}

/* Huffman weights (nw of them, the last symbol's is implied) compressed with FSE: two
 * states take turns, the first on even symbols; the decoder stops when a state update
 * runs out of bits and takes the other state's symbol last. Returns the size with the
 * header byte, 0 when not possible in 128 bytes. */
static size_t huf_weights_fse(uint8_t *out, const uint8_t *w, unsigned nw)
{
	uint32_t cnt[HUF_MAX_BITS + 1] = { 0 };
	int16_t norm[HUF_MAX_BITS + 1];
	unsigned nsym = 0, distinct = 0, x[2];
	struct bits b;
	struct fse t;
	size_t hsz;

	for (unsigned i = 0; i < nw; i++)
		cnt[w[i]]++;
	for (unsigned s = 0; s <= HUF_MAX_BITS; s++)
		if (cnt[s]) {
			nsym = s + 1;
			distinct++;
		}
	if (distinct < 2)
		return 0;
	fse_normalize(norm, cnt, nsym, nw, WEIGHT_LOG);
	fse_build(&t, norm, nsym, WEIGHT_LOG);
	hsz = fse_header(out + 1, out + 128, norm, WEIGHT_LOG);
	if (!hsz)
		return 0;
	b = (struct bits){ out + 1 + hsz, out + 128, 0, 0, 0 };
	x[(nw - 1) & 1] = fse_init(&t, w[nw - 1]);
	x[(nw - 2) & 1] = fse_init(&t, w[nw - 2]);
	for (unsigned i = nw - 2; i-- > 0;)
		fse_put(&b, &t, &x[i & 1], w[i]);
	put_bits(&b, x[1], WEIGHT_LOG);
	put_bits(&b, x[0], WEIGHT_LOG);
	if (!bits_end(&b, out, 1))
		return 0;
	out[0] = (uint8_t)(b.p - out - 1);
	return (size_t)(b.p - out);
}

/* Huffman tree description: weights of the symbols below the last, FSE compressed or
 * 4 bits each (possible up to 128 of them), whichever is smaller. Returns its size, 0
 * when it does not fit. */
static size_t huf_tree(uint8_t *p, uint8_t *end, const uint8_t *w, unsigned nw)
{
	uint8_t fse[128];
	size_t fsz = nw >= 2 ? huf_weights_fse(fse, w, nw) : 0, dsz = 1 + (nw + 1) / 2;

	if (fsz && (nw > 128 || fsz < dsz)) {
		if ((size_t)(end - p) < fsz)
			return 0;
		memcpy(p, fse, fsz);
		return fsz;
	}
	if (nw > 128 || (size_t)(end - p) < dsz)
		return 0;
	p[0] = (uint8_t)(127 + nw);
	memset(p + 1, 0, dsz - 1);
	for (unsigned i = 0; i < nw; i++)
		p[1 + i / 2] |= (uint8_t)(w[i] << (i & 1 ? 0 : 4));
	return dsz;
}

static size_t huf_stream(uint8_t *p, uint8_t *end, const uint8_t *src, uint32_t n, const uint16_t *code,
			 const uint8_t *len)
{
	struct bits b = { p, end, 0, 0, 0 };

	for (; n >= 2; n -= 2) {        /* two symbols at a time, the later one first */
		unsigned a = src[n - 1], c = src[n - 2];
		put_bits(&b, code[a] | (uint32_t)code[c] << len[a], len[a] + len[c]);
	}
	if (n)
		put_bits(&b, code[src[0]], len[src[0]]);
	return bits_end(&b, p, 1);
}

/* Compressed_Literals_Block for n literals with counts cnt (two symbols or more); returns
 * its size, 0 when it is not smaller than raw_size or does not fit. */
static size_t huf_literals(uint8_t *p, uint8_t *end, const uint8_t *lit, uint32_t n, const uint32_t *cnt,
			   unsigned nsym, size_t raw_size)
{
	uint8_t len[256], w[256];
	uint16_t code[256];
	unsigned fmt = n < 256 ? 0 : n < 1024 ? 1 : n < 16384 ? 2 : 3, hsz = fmt < 2 ? 3 : fmt + 2;
	unsigned maxbits = huf_lengths(cnt, nsym, n, len), start[HUF_MAX_BITS + 2] = { 0 }, pos = 0;
	uint8_t *q = p + hsz;
	size_t sz;

	if ((size_t)(end - p) <= hsz)
		return 0;
	for (unsigned s = 0; s < nsym; s++) {
		w[s] = (uint8_t)(len[s] ? maxbits + 1 - len[s] : 0);
		start[w[s]]++;
	}
	/* prefix codes in order of weight, then symbol; a code of weight W spans 2^(W-1)
	 * entries of the decoder's table */
	for (unsigned k = 1; k <= maxbits; k++) {
		unsigned c = start[k];
		start[k] = pos;
		pos += c << (k - 1);
	}
	for (unsigned s = 0; s < nsym; s++)
		if (w[s]) {
			code[s] = (uint16_t)(start[w[s]] >> (w[s] - 1));
			start[w[s]] += 1u << (w[s] - 1);
		}
	if (!(sz = huf_tree(q, end, w, nsym - 1)))
		return 0;
	q += sz;
	if (!fmt) {
		if (!(sz = huf_stream(q, end, lit, n, code, len)))
			return 0;
		q += sz;
	} else {        /* four streams of (n + 3) / 4 literals (the last fewer), their sizes first */
		uint32_t seg = (n + 3) / 4;
		uint8_t *jump = q;
		if (end - q < 6)
			return 0;
		q += 6;
		for (unsigned k = 0; k < 4; k++) {
			sz = huf_stream(q, end, lit + k * seg, k < 3 ? seg : n - 3 * seg, code, len);
			if (!sz)
				return 0;
			if (k < 3)
				put_le16(jump + 2 * k, (uint16_t)sz);
			q += sz;
		}
	}
	sz = (size_t)(q - p - hsz);
	if (sz + hsz >= raw_size)
		return 0;
	put_le(p, 2 | fmt << 2 | (uint64_t)n << 4 | (uint64_t)sz << (fmt < 2 ? 14 : fmt == 2 ? 18 : 22), hsz);
	return sz + hsz;
}

/* Literals section: Huffman coded or raw. (RLE literals would need an input of one byte
 * value, which is an RLE block.) */
static int put_literals(uint8_t **pp, uint8_t *end, const uint8_t *lit, uint32_t n)
{
	uint32_t cnt[256] = { 0 };
	unsigned nsym = 0, distinct = 0, hsz = n < 32 ? 1 : n < 4096 ? 2 : 3;
	uint8_t *p = *pp;
	size_t sz;

	for (uint32_t i = 0; i < n; i++)
		cnt[lit[i]]++;
	for (unsigned s = 0; s < 256; s++)
		if (cnt[s]) {
			nsym = s + 1;
			distinct++;
		}
	if (distinct > 1 && n >= 16 && (sz = huf_literals(p, end, lit, n, cnt, nsym, hsz + n))) {
		*pp = p + sz;
		return 0;
	}
	if ((size_t)(end - p) < hsz + n)
		return -1;
	/* Raw_Literals_Block, Size_Format 0 (5-bit size), 1 (12-bit) or 3 (20-bit) */
	put_le(p, (hsz == 1 ? 0 : hsz == 2 ? 1 : 3) << 2 | n << (hsz == 1 ? 3 : 4), hsz);
	memcpy(p + hsz, lit, n);
	*pp = p + hsz + n;
	return 0;
}

/* ---- sequences ------------------------------------------------------------- */

enum { LL, OF, ML };    /* the sequence fields, in the order of their tables */

/* Extra bits of the literals length codes from 16 on (lengths below 16 are their own
 * code) and of the match length codes from 32 on (match length - 3 below 32 is its code). */
static const uint8_t ll_bits[20] = { 1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static const uint8_t ml_bits[21] = { 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

/* Predefined distributions. */
static const int8_t ll_norm[36] = { 4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1,
				    2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1 };
static const int8_t of_norm[29] = { 1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
				    1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1 };
static const int8_t ml_norm[53] = { 1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
				    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
				    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1 };

static const struct field {
	const int8_t *norm;
	uint8_t nsym, log, max_log;
} fields[3] = {
	[LL] = { ll_norm, 36, 6, 9 },
	[OF] = { of_norm, 29, 5, 8 },
	[ML] = { ml_norm, 53, 6, 9 },
};

struct code {
	unsigned code, nb;
	uint32_t extra;
};

/* Codes below direct have no extra bits; bits[] gives those of the next ones. */
static void len_codes_init(struct len_codes *t, const uint8_t *bits, unsigned direct, unsigned ncodes)
{
	uint32_t base = 0, v = 0;

	for (unsigned c = 0; c < ncodes; base += 1u << t->nb[c++]) {
		t->nb[c] = c < direct ? 0 : bits[c - direct];
		t->base[c] = base;
		for (; v < 128 && v < base + (1u << t->nb[c]); v++)
			t->code[v] = (uint8_t)c;
	}
}

static struct code len_code(const struct len_codes *t, uint32_t v, unsigned hb_to_code)
{
	unsigned c = v < 128 ? t->code[v] : hb(v) + hb_to_code;

	return (struct code){ c, t->nb[c], v - t->base[c] };
}

static void seq_codes(const struct zenc *z, const struct seq *s, struct code *c)
{
	c[LL] = len_code(&z->ll_codes, s->lit, 19);
	c[ML] = len_code(&z->ml_codes, s->len - 3, 36);
	c[OF].code = c[OF].nb = hb(s->offval);
	c[OF].extra = s->offval - (1u << c[OF].nb);
}

/* The cheapest table for one field with code counts cnt: predefined, RLE (one code, no
 * bits) or a distribution written at *pp. Builds it; returns the Compression_Mode, -1
 * when out of room. */
static int pick_table(struct fse *t, uint8_t **pp, uint8_t *end, const uint32_t *cnt, uint32_t nseq,
		      const struct field *f)
{
	int16_t pre[FSE_MAX_SYM], norm[FSE_MAX_SYM] = { 0 };
	uint8_t hdr[96];
	unsigned nsym = 0, distinct = 0, log;
	uint32_t pre_cost = UINT32_MAX;
	size_t hsz;

	for (unsigned s = 0; s < FSE_MAX_SYM; s++)
		if (cnt[s]) {
			nsym = s + 1;
			distinct++;
		}
	for (unsigned s = 0; s < f->nsym; s++)
		pre[s] = f->norm[s];
	if (nsym <= f->nsym)
		pre_cost = fse_cost(cnt, pre, nsym, f->log);
	if (distinct == 1 && pre_cost > 8 << 8) {
		if (*pp >= end)
			return -1;
		*(*pp)++ = (uint8_t)(nsym - 1);
		norm[nsym - 1] = 1;
		fse_build(t, norm, nsym, 0);
		return 1;
	}
	if (distinct > 1) {
		log = hb(nseq) > 7 ? hb(nseq) - 2 : 5;
		if (log < hb(distinct) + 1)
			log = hb(distinct) + 1;
		if (log > f->max_log)
			log = f->max_log;
		fse_normalize(norm, cnt, nsym, nseq, log);
		hsz = fse_header(hdr, hdr + sizeof(hdr), norm, log);
		if (hsz && (hsz << 11) + fse_cost(cnt, norm, nsym, log) < pre_cost) {
			if ((size_t)(end - *pp) < hsz)
				return -1;
			memcpy(*pp, hdr, hsz);
			*pp += hsz;
			fse_build(t, norm, nsym, log);
			return 2;
		}
	}
	fse_build(t, pre, f->nsym, f->log);
	return 0;
}

/* Sequences section: count, compression modes, tables, then the bit stream: from the
 * last sequence to the first, the state transitions (offset, match length, literals
 * length) and the extra bits (literals length, match length, offset); then the initial
 * states (match length, offset, literals length). */
static int put_sequences(const struct zenc *z, uint8_t **pp, uint8_t *end, uint32_t nseq)
{
	uint32_t cnt[3][FSE_MAX_SYM] = { { 0 } };
	struct fse t[3];
	struct code c[3];
	unsigned x[3] = { 0 }, modes = 0;
	uint8_t *p = *pp, *mp;
	struct bits b;

	if (end - p < 4)
		return -1;
	/* Number_of_Sequences: 1 byte below 128, 2 below 0x7F00, else 255 and 2 more */
	if (nseq < 128) {
		*p++ = (uint8_t)nseq;
	} else if (nseq < 0x7F00) {
		*p++ = (uint8_t)(0x80 + (nseq >> 8));
		*p++ = (uint8_t)nseq;
	} else {
		*p++ = 255;
		put_le16(p, (uint16_t)(nseq - 0x7F00));
		p += 2;
	}
	if (!nseq) {
		*pp = p;
		return 0;
	}
	for (uint32_t i = 0; i < nseq; i++) {
		seq_codes(z, &z->seq[i], c);
		for (int f = 0; f < 3; f++)
			cnt[f][c[f].code]++;
	}
	mp = p++;
	for (int f = 0; f < 3; f++) {
		int mode = pick_table(&t[f], &p, end, cnt[f], nseq, &fields[f]);
		if (mode < 0)
			return -1;
		modes |= (unsigned)mode << (6 - 2 * f);
	}
	*mp = (uint8_t)modes;
	b = (struct bits){ p, end, 0, 0, 0 };
	for (uint32_t i = nseq; i-- > 0;) {
		seq_codes(z, &z->seq[i], c);
		if (i == nseq - 1) {
			for (int f = 0; f < 3; f++)
				x[f] = fse_init(&t[f], c[f].code);
		} else {
			fse_put(&b, &t[OF], &x[OF], c[OF].code);
			fse_put(&b, &t[ML], &x[ML], c[ML].code);
			fse_put(&b, &t[LL], &x[LL], c[LL].code);
		}
		put_bits(&b, c[LL].extra, c[LL].nb);
		put_bits(&b, c[ML].extra, c[ML].nb);
		put_bits(&b, c[OF].extra, c[OF].nb);
	}
	put_bits(&b, x[ML], t[ML].log);
	put_bits(&b, x[OF], t[OF].log);
	put_bits(&b, x[LL], t[LL].log);
	if (!bits_end(&b, p, 1))
		return -1;
	*pp = b.p;
	return 0;
}

/* ---- frame ----------------------------------------------------------------- */

/* A compressed block of in at p, smaller than limit bytes; returns its size, 0 when
 * it is not smaller. */
static size_t compress_block(struct zenc *z, const struct effort *e, const uint8_t *in, uint32_t n,
			     uint8_t *p, size_t limit)
{
	uint32_t nlit, nseq = parse(z, e, in, n, &nlit);
	uint8_t *q = p, *end = p + limit;

	if (put_literals(&q, end, z->lit, nlit) || put_sequences(z, &q, end, nseq))
		return 0;
	return (size_t)(q - p);
}

static struct zenc *zenc_new(void)
{
	struct zenc *z = calloc(1, sizeof(*z));

	if (z) {
		len_codes_init(&z->ll_codes, ll_bits, 16, 36);
		len_codes_init(&z->ml_codes, ml_bits, 32, 53);
	}
	return z;
}

int zstd_encode(void **state, int level, const void *in, size_t in_len, void *out, size_t out_cap,
		size_t *out_len)
{
	struct zenc *z = *state;
	const uint8_t *src = in;
	uint8_t *o = out, *body;
	uint32_t n = (uint32_t)in_len;
	unsigned fcs = n < 256 ? 0 : n < 65536 + 256 ? 1 : 2, hsz = 5 + (1u << fcs), type = 0;
	size_t room, bsz = n, csz;

	if (in_len > MAX_IN)
		return -EINVAL;
	if (!z && !(z = *state = zenc_new()))
		return -ENOMEM;
	if (out_cap < hsz + 3)
		return -E2BIG;
	/* magic, then Single_Segment with the content size (256 less in 2 bytes): the
	 * window is the content */
	put_le32(o, 0xFD2FB528);
	o[4] = (uint8_t)(fcs << 6 | 1 << 5);
	put_le(o + 5, fcs == 1 ? n - 256 : n, 1u << fcs);
	body = o + hsz + 3;
	room = out_cap - hsz - 3;
	level = level < 1 ? 1 : level > 15 ? 15 : level;
	if (n > 1 && !memcmp(src, src + 1, n - 1)) {
		type = 1;
		csz = 1;
	} else if (n > 1 && (csz = compress_block(z, &efforts[effort_of_level[level]], src, n, body,
						  room < n - 1 ? room : n - 1))) {
		type = 2;
		bsz = csz;
	} else {
		csz = n;
	}
	if (room < csz)
		return -E2BIG;
	if (type < 2)
		memcpy(body, src, csz);
	put_le(o + hsz, 1 | type << 1 | bsz << 3, 3);      /* Last_Block, Block_Type, Block_Size */
	*out_len = hsz + 3 + csz;
	return 0;
}
