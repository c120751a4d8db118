/* Runs every registered TEST and prints "PASS name" / "FAIL name" lines for tests/run.sh. */
#include "unit.h"
#include <string.h>

int unit_failures;
static struct unit_test *head, **tail = &head;

void unit_register(struct unit_test *t)
{
	*tail = t;
	tail = &t->next;
}

int main(int argc, char **argv)
{
	int failed = 0;

	for (struct unit_test *t = head; t; t = t->next) {
		int before = unit_failures;

		if (argc > 1 && !strstr(t->name, argv[1]))
			continue;
		t->fn();
		printf("%s %s\n", unit_failures == before ? "PASS" : "FAIL", t->name);
		failed += unit_failures != before;
	}
	return failed != 0;
}
