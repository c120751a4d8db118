//build:Oz
/* The scrub status file shared with btrfs-progs: read, parsed, written (see scrub_status.h). */
#include "scrub_status.h"
#include "strnum.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define STATUS_HEADER "scrub status:1\n"
#define STATUS_FILE_MAX (1 << 20)   /* far beyond any real device count */
#define STATS_FIELDS(X) X(t_start) X(t_resumed) X(duration) X(canceled) X(finished)

/* mkdir -p, then: can we write there? */
static int dir_writable(const char *dir)
{
	char tmp[4096];

	if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
		return 0;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(tmp, 0755);
		*p = '/';
	}
	mkdir(tmp, 0755);
	return access(dir, W_OK) == 0;
}

const char *scrub_status_dir(int *fell_back)
{
	const char *env = getenv(SCRUB_STATUS_DIR_ENV);

	*fell_back = 0;
	if (env && *env)
		return dir_writable(env) ? env : NULL;
	if (dir_writable(SCRUB_STATUS_DIR))
		return SCRUB_STATUS_DIR;
	if (dir_writable(SCRUB_STATUS_DIR_FALLBACK)) {
		*fell_back = 1;
		return SCRUB_STATUS_DIR_FALLBACK;
	}
	return NULL;
}

static void path_for_reading(const char *fsid, char *out, size_t size)
{
	const char *env = getenv(SCRUB_STATUS_DIR_ENV);
	char def[4096];
	struct stat a, b;

	if (env && *env) {
		snprintf(out, size, "%s/scrub.status.%s", env, fsid);
		return;
	}
	snprintf(def, sizeof(def), "%s/scrub.status.%s", SCRUB_STATUS_DIR, fsid);
	snprintf(out, size, "%s/scrub.status.%s", SCRUB_STATUS_DIR_FALLBACK, fsid);
	/* only the fallback has one, or it is the newer of the two */
	if (stat(out, &b) == 0 && (stat(def, &a) != 0 || a.st_mtime < b.st_mtime))
		return;
	snprintf(out, size, "%s", def);
}

static void set_field(struct scrub_record *r, const char *key, size_t klen, uint64_t v)
{
#define SET_P(name) if (klen == sizeof(#name) - 1 && !memcmp(key, #name, klen)) r->p.name = v;
#define SET_S(name) if (klen == sizeof(#name) - 1 && !memcmp(key, #name, klen)) r->s.name = v;
	SCRUB_PROGRESS_FIELDS(SET_P)
	STATS_FIELDS(SET_S)
#undef SET_P
#undef SET_S
}

/* One "FSID:DEVID|k:v|..." line; -1 when malformed or of another filesystem. Unknown
 * keys are skipped (a newer writer). */
static int parse_line(char *line, const char *fsid, struct scrub_record *r)
{
	char *p, *end;

	memset(r, 0, sizeof(*r));
	if (strlen(line) < 37 || line[36] != ':' || strncmp(line, fsid, 36))
		return -1;
	p = line + 37;
	if (!isdigit((unsigned char)*p))
		return -1;
	r->devid = str_to_ull(p, &end, 10);
	p = end;
	while (*p == '|') {
		char *colon = strchr(++p, ':');

		if (!colon || !isdigit((unsigned char)colon[1]))
			return -1;
		set_field(r, p, (size_t)(colon - p), str_to_ull(colon + 1, &end, 10));
		p = end;
	}
	return *p ? -1 : 0;
}

int scrub_status_parse(char *text, const char *fsid, struct scrub_record **out, size_t *count)
{
	struct scrub_record *v = NULL, r;
	char *line, *save = NULL;
	size_t n = 0;

	*out = NULL;
	*count = 0;
	if (strncmp(text, STATUS_HEADER, strlen(STATUS_HEADER)))
		return *text ? -EINVAL : 0;
	for (line = strtok_r(text + strlen(STATUS_HEADER), "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		void *p;

		if (parse_line(line, fsid, &r))
			continue;
		p = realloc(v, (n + 1) * sizeof(*v));
		if (!p) {
			free(v);
			return -ENOMEM;
		}
		v = p;
		v[n++] = r;
	}
	*out = v;
	*count = n;
	return 0;
}

int scrub_status_read(const char *fsid, struct scrub_record **out, size_t *count)
{
	char path[4096], *buf;
	ssize_t len;
	int fd, ret;

	*out = NULL;
	*count = 0;
	path_for_reading(fsid, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	buf = malloc(STATUS_FILE_MAX + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	len = read(fd, buf, STATUS_FILE_MAX);
	ret = len < 0 ? -errno : 0;
	close(fd);
	if (!ret) {
		buf[len] = 0;
		ret = scrub_status_parse(buf, fsid, out, count);
	}
	free(buf);
	return ret;
}

static int write_line(FILE *f, const char *fsid, const struct scrub_record *r)
{
	fprintf(f, "%s:%llu", fsid, (unsigned long long)r->devid);
#define PUT_P(name) fprintf(f, "|%s:%llu", #name, (unsigned long long)r->p.name);
#define PUT_S(name) fprintf(f, "|%s:%llu", #name, (unsigned long long)r->s.name);
	SCRUB_PROGRESS_FIELDS(PUT_P)
	STATS_FIELDS(PUT_S)
#undef PUT_P
#undef PUT_S
	return fputc('\n', f) == EOF ? -EIO : 0;
}

int scrub_status_write(const char *dir, const char *fsid, const struct scrub_record *v, size_t n)
{
	char path[4096], tmp[4200];
	FILE *f;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/scrub.status.%s", dir, fsid);
	snprintf(tmp, sizeof(tmp), "%s_tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return -ENOMEM;
	}
	fputs(STATUS_HEADER, f);
	for (size_t i = 0; i < n && !ret; i++)
		ret = write_line(f, fsid, &v[i]);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

struct scrub_record *scrub_status_find(struct scrub_record *v, size_t n, uint64_t devid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].devid == devid)
			return &v[i];
	return NULL;
}

void scrub_progress_add(struct btrfs_scrub_progress *to, const struct btrfs_scrub_progress *from)
{
#define ADD(name) to->name += from->name;
	ADD(data_extents_scrubbed) ADD(tree_extents_scrubbed) ADD(data_bytes_scrubbed)
	ADD(tree_bytes_scrubbed) ADD(read_errors) ADD(csum_errors) ADD(verify_errors)
	ADD(no_csum) ADD(csum_discards) ADD(super_errors) ADD(malloc_errors)
	ADD(uncorrectable_errors) ADD(corrected_errors)
#undef ADD
}
