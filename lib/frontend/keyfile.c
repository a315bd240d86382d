// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The key file, checked before it is trusted: the initramfs resumes as root
 * whatever image this key opens, so a key that someone else could have read
 * or written protects nothing, and a short one can be guessed.
 */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/keyfile.h"
#include "util/error.h"

/* How to make a good key file, said with every refusal that needs a new one. */
#define NEW_KEY_FIX                                                                                \
	"make one as root with (umask 077; head -c 64 /dev/urandom > %s), then run "               \
	"update-initramfs -u"

/* What the descriptor is: refused unless a regular file only root can read or write. */
static int key_file_stat(int fd, const char *path, size_t *ret_size, struct hib_error *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return hib_error_set(err, -errno, "%s: cannot stat the key file: %s", path,
				     strerror(errno));
	if (S_ISDIR(st.st_mode))
		return hib_error_set(err, -EISDIR,
				     "%s: is a directory, not a key file: " NEW_KEY_FIX, path,
				     path);
	if (!S_ISREG(st.st_mode))
		return hib_error_set(err, -EINVAL,
				     "%s: is not a regular file (a device, FIFO or socket), so it "
				     "cannot hold a key: " NEW_KEY_FIX,
				     path, path);
	if (st.st_uid != 0)
		return hib_error_set(err, -EPERM,
				     "%s: the key file is owned by uid %u, not root, who could "
				     "read or replace the key: chown root:root %s",
				     path, (unsigned)st.st_uid, path);
	if (st.st_mode & 077)
		return hib_error_set(err, -EPERM,
				     "%s: the key file has mode %04o: group or others may read or "
				     "write the key: chmod 600 %s",
				     path, (unsigned)(st.st_mode & 07777), path);
	if (st.st_size < (off_t)HIB_KEY_FILE_MIN || st.st_size > (off_t)HIB_KEY_FILE_MAX)
		return hib_error_set(err, -EMSGSIZE,
				     "%s: the key file has %lld bytes; a key file has %u to %u "
				     "(nothing is cut off): " NEW_KEY_FIX,
				     path, (long long)st.st_size, HIB_KEY_FILE_MIN,
				     HIB_KEY_FILE_MAX, path);
	*ret_size = (size_t)st.st_size;
	return 0;
}

/* Open @path as a key file and check it: the descriptor and the key's size. */
static int key_file_open(const char *path, int *ret_fd, size_t *ret_size, struct hib_error *err)
{
	_cleanup_(closep) int fd = -1;
	int r;

	hib_error_clear(err);
	/* O_NONBLOCK: a FIFO is refused at once instead of waited on. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ELOOP)
		return hib_error_set(err, -ELOOP,
				     "%s: the key file is a symbolic link, which need not point "
				     "where it did: name the file itself in key-file (readlink -f "
				     "%s)",
				     path, path);
	if (fd < 0)
		return hib_error_set(err, -errno,
				     "%s: cannot open the key file: %s; check key-file in %s", path,
				     strerror(errno), HIB_CONFIG_PATH);
	r = key_file_stat(fd, path, ret_size, err);
	if (r < 0)
		return r;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int hib_key_file_check(const char *path, struct hib_error *err)
{
	size_t size = 0;
	int fd = -1, r;

	r = key_file_open(path, &fd, &size, err);
	if (r == 0)
		close(fd);
	return r;
}

void hib_key_file_free(struct hib_key_file *k)
{
	if (k->data)
		sodium_free(k->data); /* wipes it */
	k->data = NULL;
	k->len = 0;
}

int hib_key_file_read(const char *path, struct hib_key_file *ret, struct hib_error *err)
{
	_cleanup_(closep) int fd = -1;
	struct hib_key_file k = { 0 };
	size_t size = 0, got = 0;
	ssize_t n = 0;
	int r;

	r = key_file_open(path, &fd, &size, err);
	if (r < 0)
		return r;
	if (sodium_init() < 0)
		return hib_error_set(err, -EIO, "%s: libsodium could not be initialised", path);
	/* One byte more than the file should hold: a file that grew is noticed, not cut. */
	k.data = sodium_malloc(size + 1);
	if (!k.data)
		return hib_error_set(err, -ENOMEM, "%s: no locked memory for the key", path);
	while (got <= size && (n = pread(fd, k.data + got, size + 1 - got, (off_t)got)) > 0)
		got += (size_t)n;
	if (got <= size && n < 0)
		r = hib_error_set(err, -errno, "%s: reading the key file failed: %s", path,
				  strerror(errno));
	else if (got != size)
		r = hib_error_set(err, -EAGAIN,
				  "%s: the key file changed while it was read: try again, and "
				  "see what else writes it",
				  path);
	if (r < 0) {
		hib_key_file_free(&k);
		return r;
	}
	k.len = size;
	*ret = k;
	return 0;
}
