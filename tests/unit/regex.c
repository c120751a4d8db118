/* util/regex: the ERE subset restore --path-regex uses, against POSIX semantics. */
#include "unit.h"
#include "util/cli/regex.h"

static int m(const char *pat, const char *s, int icase)
{
	struct re *re;
	char err[128];
	int r;

	if (re_compile(&re, pat, icase, err, sizeof(err)))
		return -1;
	r = re_search(re, s);
	re_free(re);
	return r;
}

TEST(regex_restore_anchored_form)
{
	const char *p = "^/(|home(|/user(|/.*)))$";

	CHECK(m(p, "/", 0) == 1);
	CHECK(m(p, "/home", 0) == 1);
	CHECK(m(p, "/home/user", 0) == 1);
	CHECK(m(p, "/home/user/a/b", 0) == 1);
	CHECK(m(p, "/home/other", 0) == 0);
	CHECK(m(p, "/etc", 0) == 0);
	CHECK(m(p, "/HOME", 1) == 1);
	CHECK(m(p, "/HOME", 0) == 0);
}

TEST(regex_operators)
{
	CHECK(m("ab*c", "xxacxx", 0) == 1);
	CHECK(m("ab+c", "ac", 0) == 0);
	CHECK(m("ab+c", "abbbc", 0) == 1);
	CHECK(m("^a?b$", "b", 0) == 1);
	CHECK(m("^a?b$", "aab", 0) == 0);
	CHECK(m("^[a-c]+$", "abcabc", 0) == 1);
	CHECK(m("^[^/]*$", "a/b", 0) == 0);
	CHECK(m("^[[:digit:]]+\\.txt$", "123.txt", 0) == 1);
	CHECK(m("^[[:digit:]]+\\.txt$", "123atxt", 0) == 0);
	CHECK(m("x|y", "--y--", 0) == 1);
	CHECK(m("^(a|b)*c$", "ababbc", 0) == 1);
	CHECK(m("^$", "", 0) == 1);
	CHECK(m("[A-Z]", "q", 1) == 1);
}

TEST(regex_rejects_bad_patterns)
{
	CHECK(m("(a", "a", 0) == -1);
	CHECK(m("a)", "a", 0) == -1);
	CHECK(m("[a", "a", 0) == -1);
	CHECK(m("*a", "a", 0) == -1);
	CHECK(m("a{2}", "aa", 0) == -1);
	CHECK(m("[z-a]", "a", 0) == -1);
	CHECK(m("a\\", "a", 0) == -1);
}

TEST(regex_no_exponential_blowup)
{
	char s[4001];

	for (int i = 0; i < 4000; i++)
		s[i] = 'a';
	s[4000] = 0;
	CHECK(m("^(a*)*(a*)*(a*)*b$", s, 0) == 0);
}
