//build:Oz
/* The POSIX-ERE subset of restore --path-regex: parser, Thompson NFA, matcher (see regex.h). */
#include "regex.h"
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OP_CHAR, OP_ANY, OP_CLASS, OP_BOL, OP_EOL, OP_SPLIT, OP_JMP, OP_MATCH };
enum { N_CHAR, N_ANY, N_CLASS, N_BOL, N_EOL, N_CAT, N_ALT, N_STAR, N_PLUS, N_QUEST, N_EMPTY };

struct ins { uint8_t op; uint8_t c; int x, y; };       /* x, y: jump targets or class */
struct node { uint8_t type, c; int a, b; };             /* a, b: children or class */

struct re {
	struct ins *prog;
	int nprog;
	uint8_t (*classes)[32];   /* 256-bit sets */
	int icase;
};

struct parser {
	const char *p;
	struct node *nodes;
	int nnodes, cap;
	uint8_t (*classes)[32];
	int nclasses;
	int icase;
	const char *err;
};

static int new_node(struct parser *ps, int type, int c, int a, int b)
{
	if (ps->nnodes == ps->cap) {
		ps->err = "pattern too complex";
		return -1;
	}
	ps->nodes[ps->nnodes] = (struct node){ (uint8_t)type, (uint8_t)c, a, b };
	return ps->nnodes++;
}

static void class_set(uint8_t *set, int c, int icase)
{
	set[c >> 3] |= (uint8_t)(1 << (c & 7));
	if (icase && isalpha(c)) {
		int o = islower(c) ? toupper(c) : tolower(c);
		set[o >> 3] |= (uint8_t)(1 << (o & 7));
	}
}

/* [:name:] inside a bracket: adds the members; returns chars consumed, 0 if not one. */
static int named_class(const char *p, uint8_t *set)
{
	static const struct { const char *name; int (*fn)(int); } tab[] = {
		{ "alpha", isalpha }, { "digit", isdigit }, { "alnum", isalnum }, { "upper", isupper },
		{ "lower", islower }, { "space", isspace }, { "punct", ispunct }, { "xdigit", isxdigit },
		{ "print", isprint }, { "graph", isgraph }, { "cntrl", iscntrl }, { "blank", isblank },
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		size_t n = strlen(tab[i].name);
		if (!strncmp(p, tab[i].name, n) && !strncmp(p + n, ":]", 2)) {
			for (int c = 0; c < 256; c++)
				if (tab[i].fn(c))
					set[c >> 3] |= (uint8_t)(1 << (c & 7));
			return (int)n + 2;
		}
	}
	return 0;
}

static int parse_bracket(struct parser *ps)
{
	uint8_t *set = ps->classes[ps->nclasses];
	int negate = 0, first = 1, n;

	memset(set, 0, 32);
	if (*ps->p == '^') {
		negate = 1;
		ps->p++;
	}
	while (*ps->p && (first || *ps->p != ']')) {
		int lo = (unsigned char)*ps->p++, hi = lo;

		first = 0;
		if (lo == '[' && *ps->p == ':' && (n = named_class(ps->p + 1, set))) {
			ps->p += 1 + n;
			continue;
		}
		if (*ps->p == '-' && ps->p[1] && ps->p[1] != ']') {
			hi = (unsigned char)ps->p[1];
			ps->p += 2;
		}
		if (hi < lo) {
			ps->err = "invalid range in bracket expression";
			return -1;
		}
		for (int c = lo; c <= hi; c++)
			class_set(set, c, ps->icase);
	}
	if (*ps->p != ']') {
		ps->err = "unterminated bracket expression";
		return -1;
	}
	ps->p++;
	if (negate)
		for (int i = 0; i < 32; i++)
			set[i] = (uint8_t)~set[i];
	set[0] &= (uint8_t)~1;      /* never NUL */
	return new_node(ps, N_CLASS, 0, ps->nclasses++, 0);
}

static int parse_alt(struct parser *ps);

static int parse_atom(struct parser *ps)
{
	int c = (unsigned char)*ps->p, n;

	if (c == '(') {
		ps->p++;
		n = (*ps->p == ')') ? new_node(ps, N_EMPTY, 0, 0, 0) : parse_alt(ps);
		if (n < 0)
			return -1;
		if (*ps->p != ')') {
			ps->err = "unbalanced parenthesis";
			return -1;
		}
		ps->p++;
		return n;
	}
	ps->p++;
	switch (c) {
	case '.': return new_node(ps, N_ANY, 0, 0, 0);
	case '^': return new_node(ps, N_BOL, 0, 0, 0);
	case '$': return new_node(ps, N_EOL, 0, 0, 0);
	case '[': return parse_bracket(ps);
	case '*': case '+': case '?': case '{':
		ps->err = "repetition operator without operand";
		return -1;
	case '\\':
		if (!*ps->p) {
			ps->err = "trailing backslash";
			return -1;
		}
		c = (unsigned char)*ps->p++;
		break;
	}
	if (ps->icase)
		c = tolower(c);
	return new_node(ps, N_CHAR, c, 0, 0);
}

static int parse_repeat(struct parser *ps)
{
	int n = parse_atom(ps);

	while (n >= 0 && (*ps->p == '*' || *ps->p == '+' || *ps->p == '?' || *ps->p == '{')) {
		char op = *ps->p++;

		if (op == '{') {
			ps->err = "interval expressions {m,n} are not supported";
			return -1;
		}
		n = new_node(ps, op == '*' ? N_STAR : op == '+' ? N_PLUS : N_QUEST, 0, n, 0);
	}
	return n;
}

static int parse_cat(struct parser *ps)
{
	int n = new_node(ps, N_EMPTY, 0, 0, 0), m;

	while (n >= 0 && *ps->p && *ps->p != '|' && *ps->p != ')') {
		m = parse_repeat(ps);
		n = m < 0 ? -1 : new_node(ps, N_CAT, 0, n, m);
	}
	return n;
}

static int parse_alt(struct parser *ps)
{
	int n = parse_cat(ps), m;

	while (n >= 0 && *ps->p == '|') {
		ps->p++;
		m = parse_cat(ps);
		n = m < 0 ? -1 : new_node(ps, N_ALT, 0, n, m);
	}
	return n;
}

static int emit(struct re *re, int op, int c, int x, int y)
{
	re->prog[re->nprog] = (struct ins){ (uint8_t)op, (uint8_t)c, x, y };
	return re->nprog++;
}

/* Thompson construction; every node emits at most 2 instructions plus its children. */
static void gen(struct re *re, const struct node *nodes, int i)
{
	const struct node *n = &nodes[i];
	int l1, l2;

	switch (n->type) {
	case N_CHAR: emit(re, OP_CHAR, n->c, 0, 0); break;
	case N_ANY: emit(re, OP_ANY, 0, 0, 0); break;
	case N_CLASS: emit(re, OP_CLASS, 0, n->a, 0); break;
	case N_BOL: emit(re, OP_BOL, 0, 0, 0); break;
	case N_EOL: emit(re, OP_EOL, 0, 0, 0); break;
	case N_EMPTY: break;
	case N_CAT: gen(re, nodes, n->a); gen(re, nodes, n->b); break;
	case N_ALT:
		l1 = emit(re, OP_SPLIT, 0, 0, 0);
		re->prog[l1].x = re->nprog;
		gen(re, nodes, n->a);
		l2 = emit(re, OP_JMP, 0, 0, 0);
		re->prog[l1].y = re->nprog;
		gen(re, nodes, n->b);
		re->prog[l2].x = re->nprog;
		break;
	case N_STAR: case N_QUEST:
		l1 = emit(re, OP_SPLIT, 0, 0, 0);
		re->prog[l1].x = re->nprog;
		gen(re, nodes, n->a);
		if (n->type == N_STAR)
			emit(re, OP_JMP, 0, l1, 0);
		re->prog[l1].y = re->nprog;
		break;
	case N_PLUS:
		l1 = re->nprog;
		gen(re, nodes, n->a);
		emit(re, OP_SPLIT, 0, l1, re->nprog + 1);
		break;
	}
}

int re_compile(struct re **out, const char *pattern, int icase, char *err, size_t errlen)
{
	size_t len = strlen(pattern);
	struct parser ps = { pattern, NULL, 0, (int)(3 * len + 4), NULL, 0, icase, NULL };
	struct re *re = calloc(1, sizeof(*re));
	int root = -1;

	if (len > 4096)
		ps.err = "pattern too long";
	else if (re && (ps.nodes = calloc((size_t)ps.cap, sizeof(*ps.nodes))) &&
		 (ps.classes = calloc(len + 1, 32)) &&
		 (re->prog = calloc((size_t)ps.cap * 2 + 1, sizeof(*re->prog)))) {
		root = parse_alt(&ps);
		if (root >= 0 && *ps.p)
			ps.err = "unbalanced parenthesis";
	} else
		ps.err = "out of memory";
	if (!ps.err) {
		gen(re, ps.nodes, root);
		emit(re, OP_MATCH, 0, 0, 0);
		re->classes = ps.classes;
		re->icase = icase;
		free(ps.nodes);
		*out = re;
		return 0;
	}
	snprintf(err, errlen, "%s", ps.err);
	free(ps.nodes);
	free(ps.classes);
	re_free(re);
	return -1;
}

struct threads { int *pc; int n; };

/* Adds pc and what it reaches without consuming a character. */
static void add_thread(const struct re *re, struct threads *t, uint8_t *on, int pc,
		       const char *s, const char *at)
{
	const struct ins *in;

	if (on[pc])
		return;
	on[pc] = 1;
	in = &re->prog[pc];
	switch (in->op) {
	case OP_JMP: add_thread(re, t, on, in->x, s, at); return;
	case OP_SPLIT:
		add_thread(re, t, on, in->x, s, at);
		add_thread(re, t, on, in->y, s, at);
		return;
	case OP_BOL: if (at == s) add_thread(re, t, on, pc + 1, s, at); return;
	case OP_EOL: if (!*at) add_thread(re, t, on, pc + 1, s, at); return;
	}
	t->pc[t->n++] = pc;
}

static int step_ok(const struct re *re, const struct ins *in, int c)
{
	switch (in->op) {
	case OP_CHAR: return c == in->c;
	case OP_ANY: return c != 0;
	case OP_CLASS: return (re->classes[in->x][c >> 3] >> (c & 7)) & 1;
	}
	return 0;
}

int re_search(const struct re *re, const char *s)
{
	size_t n = (size_t)re->nprog;
	int *buf = malloc(2 * n * sizeof(int));
	uint8_t *on = malloc(n);
	struct threads cur = { buf, 0 }, next = { buf ? buf + n : NULL, 0 }, tmp;
	int found = 0;

	if (!buf || !on) {
		free(buf);
		free(on);
		return 0;
	}
	memset(on, 0, n);
	for (const char *at = s;; at++) {
		int c = (unsigned char)*at;

		add_thread(re, &cur, on, 0, s, at);     /* a match may start anywhere */
		if (re->icase)
			c = tolower(c);
		memset(on, 0, n);
		next.n = 0;
		for (int i = 0; i < cur.n && !found; i++) {
			const struct ins *in = &re->prog[cur.pc[i]];

			if (in->op == OP_MATCH)
				found = 1;
			else if (c && step_ok(re, in, c))
				add_thread(re, &next, on, cur.pc[i] + 1, s, at + 1);
		}
		if (found || !c)
			break;
		tmp = cur;
		cur = next;
		next = tmp;
	}
	free(buf);
	free(on);
	return found;
}

void re_free(struct re *re)
{
	if (!re)
		return;
	free(re->prog);
	free(re->classes);
	free(re);
}
