//build:Oz
/* strerror() with glibc's texts: musl words some errno values differently ("I/O error",
 * "Resource busy", "Not a tty"), and users and scripts grep for the texts btrfs-progs prints
 * ("Input/output error", "Device or resource busy", ...). musl builds link with
 * -Wl,--wrap=strerror, so every call (printf's %m in musl too) comes here first. */
#ifndef __GLIBC__
#include <errno.h>
#include <string.h>

char *__real_strerror(int e);

/* The values whose musl text differs from glibc's, and glibc's texts in the same order. */
static const unsigned short codes[] = {
	0, EIO, ENOMEM, EBUSY, EXDEV, ENOTTY, ESPIPE, ERANGE, ENAMETOOLONG, ELOOP, EOPNOTSUPP,
	ENOTCONN, EINPROGRESS, EUCLEAN, EDQUOT,
};
static const char texts[] =
	"Success\0Input/output error\0Cannot allocate memory\0Device or resource busy\0"
	"Invalid cross-device link\0Inappropriate ioctl for device\0Illegal seek\0"
	"Numerical result out of range\0File name too long\0Too many levels of symbolic links\0"
	"Operation not supported\0Transport endpoint is not connected\0"
	"Operation now in progress\0Structure needs cleaning\0Disk quota exceeded";

char *__wrap_strerror(int e)
{
	const char *t = texts;

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++, t += strlen(t) + 1)
		if (codes[i] == e)
			return (char *)t;
	return __real_strerror(e);
}
#endif
