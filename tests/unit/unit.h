/* Minimal unit-test harness: TEST(name) { CHECK(cond); } — tests register themselves. */
#ifndef UNIT_H
#define UNIT_H
#include <stdio.h>

struct unit_test { const char *name; void (*fn)(void); struct unit_test *next; };
void unit_register(struct unit_test *t);
extern int unit_failures;

#define TEST(name) \
	static void test_##name(void); \
	static struct unit_test unit_##name = { #name, test_##name, 0 }; \
	__attribute__((constructor)) static void reg_##name(void) { unit_register(&unit_##name); } \
	static void test_##name(void)

#define CHECK(cond) do { if (!(cond)) { unit_failures++; \
	fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); } } while (0)

#endif
