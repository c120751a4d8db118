/* recv_open_beneath: both the openat2 path and the component walk refuse symlinks
 * (inside or pointing outside) and open plain directories. */
#include "unit.h"
#include "fs/stream/receive.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

TEST(confine_open_beneath_both_ways)
{
	char dir[] = "/tmp/confine.XXXXXX", cmd[64];
	int root, walk;

	CHECK(mkdtemp(dir) != NULL);
	root = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(root >= 0);
	CHECK(mkdirat(root, "a", 0700) == 0 && mkdirat(root, "a/b", 0700) == 0);
	CHECK(symlinkat("/", root, "abs") == 0 && symlinkat("a", root, "rel") == 0);
	CHECK(symlinkat("../..", root, "a/up") == 0);
	for (walk = 0; walk <= 1; walk++) {
		int fd = recv_open_beneath(root, "a/b", walk);
		struct stat st;

		CHECK(fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode));
		if (fd >= 0)
			close(fd);
		errno = 0;
		CHECK(recv_open_beneath(root, "abs", walk) < 0 && errno == ELOOP);
		CHECK(recv_open_beneath(root, "rel/b", walk) < 0 && errno == ELOOP);
		CHECK(recv_open_beneath(root, "a/up", walk) < 0 && errno == ELOOP);
		CHECK(recv_open_beneath(root, "missing", walk) < 0 && errno == ENOENT);
	}
	close(root);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}
