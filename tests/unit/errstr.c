/* util/errstr: strerror() prints glibc's texts (musl builds wrap it; glibc has them). */
#include "unit.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

TEST(glibc_texts)
{
	char buf[64];

	CHECK(!strcmp(strerror(EIO), "Input/output error"));
	CHECK(!strcmp(strerror(EBUSY), "Device or resource busy"));
	CHECK(!strcmp(strerror(ENOTTY), "Inappropriate ioctl for device"));
	CHECK(!strcmp(strerror(EXDEV), "Invalid cross-device link"));
	CHECK(!strcmp(strerror(EDQUOT), "Disk quota exceeded"));
	CHECK(!strcmp(strerror(EUCLEAN), "Structure needs cleaning"));
	/* values the table leaves to the C library */
	CHECK(!strcmp(strerror(ENOENT), "No such file or directory"));
	CHECK(!strcmp(strerror(EINVAL), "Invalid argument"));
	errno = ENOTCONN;
	snprintf(buf, sizeof(buf), "%m");
	CHECK(!strcmp(buf, "Transport endpoint is not connected"));
}
