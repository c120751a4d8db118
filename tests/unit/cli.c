/* util/cli: argument helpers. */
#include "unit.h"
#include "cli.h"

TEST(all_digits)
{
	CHECK(cli_all_digits("0"));
	CHECK(cli_all_digits("0123456789"));
	CHECK(!cli_all_digits(""));
	CHECK(!cli_all_digits("12a"));
	CHECK(!cli_all_digits("-1"));
	CHECK(!cli_all_digits("+1"));
	CHECK(!cli_all_digits(" 1"));
	CHECK(!cli_all_digits("0x10"));
}
