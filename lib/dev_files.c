/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The files programs probe to find RDMA devices, answered for emulated
 * devices only (UCX stat()s and access()es /dev/infiniband/<dev_name>, then
 * open()s /sys/class/infiniband/<dev>/ports/1/gid_attrs/...; Open MPI
 * readlink()s /sys/class/infiniband/<dev>/device/driver):
 * - /dev/infiniband/<dev_name> reads as the character device uverbs makes
 *   (mode 0666, major 231, minor 192 + index); opening it still fails, and
 *   readlink() says EINVAL (not a link);
 * - /sys/class/infiniband/<dev>[/...] is the daemon's tree at ibdev_path;
 * - /dev/infiniband/rdma_cm opens rocemud's RDMA CM (ucma.c) once this
 *   process has listed emulated devices, as librdmacm does before it opens it.
 * A device counts once this process listed it (ibv_get_device_list), so the
 * shim stays inert. Any other path costs one prefix test, then the libc call
 * (its *at form, which is what glibc's own stat, access and open call).
 */
#undef _FORTIFY_SOURCE		/* this file defines open itself */
#include "shim.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define DEV_NODE_PREFIX "/dev/infiniband/"
#define SYSFS_PREFIX "/sys/class/infiniband/"
#define UCMA_DEV_NODE DEV_NODE_PREFIX "rdma_cm"	/* the RDMA CM file: ucma.c */
#define UVERBS_MAJOR 231	/* the kernel's IB_UVERBS_MAJOR and IB_UVERBS_BASE_MINOR */
#define UVERBS_BASE_MINOR 192

/* What a probed path is: nothing of ours, an emulated device node, a file of an emulated device. */
enum probe { PROBE_OTHER, PROBE_DEV_NODE, PROBE_SYSFS };

static bool has_prefix(const char *path, const char *prefix, size_t len)
{
	return !strncmp(path, prefix, len);
}

/*
 * Classify path. For a device node *dev is the device; for a sysfs path
 * sysfs holds the daemon's file that stands for it.
 */
static enum probe probe_of(const char *path, const struct ibv_device **dev,
			   char sysfs[PATH_MAX])
{
	const char *name, *rest;

	if (!path || path[0] != '/')
		return PROBE_OTHER;
	if (has_prefix(path, DEV_NODE_PREFIX, sizeof(DEV_NODE_PREFIX) - 1)) {
		name = path + sizeof(DEV_NODE_PREFIX) - 1;
		*dev = rocemu_device_named(name, strlen(name), true);
		return *dev ? PROBE_DEV_NODE : PROBE_OTHER;
	}
	if (!has_prefix(path, SYSFS_PREFIX, sizeof(SYSFS_PREFIX) - 1))
		return PROBE_OTHER;
	name = path + sizeof(SYSFS_PREFIX) - 1;
	rest = strchrnul(name, '/');
	*dev = rocemu_device_named(name, (size_t)(rest - name), false);
	if (!*dev || snprintf(sysfs, PATH_MAX, "%s%s", (*dev)->ibdev_path, rest) >= PATH_MAX)
		return PROBE_OTHER;
	return PROBE_SYSFS;
}

/* The uverbs character device as stat(2) shows it. */
static void dev_node_stat(const struct ibv_device *dev, struct stat64 *st)
{
	const struct rocemu_device *d = rocemu_device_of((struct ibv_device *)dev);

	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0666;
	st->st_nlink = 1;
	st->st_rdev = makedev(UVERBS_MAJOR, UVERBS_BASE_MINOR + d->info.index);
	st->st_blksize = 4096;
}

/* access(2) of a mode 0666 node: read and write, not execute. */
static int dev_node_access(int mode)
{
	if (mode & X_OK) {
		errno = EACCES;
		return -1;
	}
	return 0;
}

int stat64(const char *restrict path, struct stat64 *restrict st)
{
	const struct ibv_device *dev;
	char sysfs[PATH_MAX];

	switch (probe_of(path, &dev, sysfs)) {
	case PROBE_DEV_NODE:
		dev_node_stat(dev, st);
		return 0;
	case PROBE_SYSFS:
		return fstatat64(AT_FDCWD, sysfs, st, 0);
	default:
		return fstatat64(AT_FDCWD, path, st, 0);
	}
}

_Static_assert(sizeof(struct stat) == sizeof(struct stat64) &&
	       offsetof(struct stat, st_rdev) == offsetof(struct stat64, st_rdev),
	       "struct stat is struct stat64 on the targets the shim builds for");

int stat(const char *restrict path, struct stat *restrict st)
{
	return stat64(path, (struct stat64 *)st);
}

int access(const char *path, int mode)
{
	const struct ibv_device *dev;
	char sysfs[PATH_MAX];

	switch (probe_of(path, &dev, sysfs)) {
	case PROBE_DEV_NODE:
		return dev_node_access(mode);
	case PROBE_SYSFS:
		return faccessat(AT_FDCWD, sysfs, mode, 0);
	default:
		return faccessat(AT_FDCWD, path, mode, 0);
	}
}

_Static_assert(sizeof(void *) == 8, "open64 is open only where O_LARGEFILE is implied");

int open(const char *path, int flags, ...)
{
	const struct ibv_device *dev;
	char sysfs[PATH_MAX];
	mode_t mode = 0;
	va_list ap;

	/* the mode argument is there only when flags need one */
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!strcmp(path, UCMA_DEV_NODE) && rocemu_devices_listed()) {
		int fd = rocemu_ucma_open(flags);

		if (fd < 0) {
			errno = -fd;
			return -1;
		}
		return fd;
	}
	if (probe_of(path, &dev, sysfs) == PROBE_SYSFS)
		return openat(AT_FDCWD, sysfs, flags, mode);
	return openat(AT_FDCWD, path, flags, mode);
}

/* As in glibc on 64-bit targets, where O_LARGEFILE is implied. */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));

ssize_t readlink(const char *restrict path, char *restrict buf, size_t len)
{
	const struct ibv_device *dev;
	char sysfs[PATH_MAX];

	switch (probe_of(path, &dev, sysfs)) {
	case PROBE_DEV_NODE:
		errno = EINVAL;
		return -1;
	case PROBE_SYSFS:
		return readlinkat(AT_FDCWD, sysfs, buf, len);
	default:
		return readlinkat(AT_FDCWD, path, buf, len);
	}
}
