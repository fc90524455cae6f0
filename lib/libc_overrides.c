/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The libc functions librocemu.so exports, all of them here: preloaded, the
 * shim answers in front of libc for the files of emulated devices
 * (dev_files.c) and for the RDMA CM file (lib/cm/ucma.c), and hands every
 * other path or descriptor to libc after one test; mmap of a ConnectX-3
 * context's cmd_fd maps its QPs' doorbell pages (lib/mlx4/uar_map.c). A
 * path goes to the *at form (which is what glibc's own stat, access and
 * open call), a descriptor to the next definition of the function, found
 * with dlsym(RTLD_NEXT).
 */
#undef _FORTIFY_SOURCE		/* this file defines open and readlink itself */
#include "lib/shim.h"
#include "lib/cm/ucma.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* libc's own function name, found once. */
static void *libc_next(const char *name, void **cache)
{
	void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, p, __ATOMIC_RELEASE);
	}
	return p;
}

ssize_t rocemu_libc_write(int fd, const void *buf, size_t n)
{
	static void *fn;

	return ((ssize_t(*)(int, const void *, size_t))libc_next("write", &fn))(fd, buf, n);
}

int rocemu_libc_close(int fd)
{
	static void *fn;

	return ((int (*)(int))libc_next("close", &fn))(fd);
}

/* stat64(2): an emulated device's node, or its sysfs file in the daemon's tree. */
int stat64(const char *restrict path, struct stat64 *restrict st)
{
	const struct ibv_device *dev;
	char sysfs[PATH_MAX];

	switch (rocemu_dev_file_probe(path, &dev, sysfs)) {
	case ROCEMU_DEV_FILE_NODE:
		rocemu_dev_node_stat(dev, st);
		return 0;
	case ROCEMU_DEV_FILE_SYSFS:
		return fstatat64(AT_FDCWD, sysfs, st, 0);
	default:
		return fstatat64(AT_FDCWD, path, st, 0);
	}
}

_Static_assert(sizeof(struct stat) == sizeof(struct stat64) &&
	       offsetof(struct stat, st_rdev) == offsetof(struct stat64, st_rdev),
	       "struct stat is struct stat64 on the targets the shim builds for");

/* stat(2): stat64's answer. */
int stat(const char *restrict path, struct stat *restrict st)
{
	return stat64(path, (struct stat64 *)st);
}

/* access(2): an emulated device's node, or its sysfs file in the daemon's tree. */
int access(const char *path, int mode)
{
	const struct ibv_device *dev;
	char sysfs[PATH_MAX];

	switch (rocemu_dev_file_probe(path, &dev, sysfs)) {
	case ROCEMU_DEV_FILE_NODE:
		return rocemu_dev_node_access(mode);
	case ROCEMU_DEV_FILE_SYSFS:
		return faccessat(AT_FDCWD, sysfs, mode, 0);
	default:
		return faccessat(AT_FDCWD, path, mode, 0);
	}
}

_Static_assert(sizeof(void *) == 8, "open64 is open only where O_LARGEFILE is implied");

/* statx(2), which coreutils calls: a device's sysfs file is the daemon's. */
int statx(int dirfd, const char *restrict path, int flags, unsigned int mask,
	  struct statx *restrict buf)
{
	static void *fn;
	const struct ibv_device *dev;
	char sysfs[PATH_MAX];

	if (rocemu_dev_file_probe(path, &dev, sysfs) == ROCEMU_DEV_FILE_SYSFS)
		path = sysfs;
	return ((int (*)(int, const char *, int, unsigned int, struct statx *))
		libc_next("statx", &fn))(dirfd, path, flags, mask, buf);
}

/* opendir(3) (glibc opens the directory with no call the shim sees): a device's sysfs directory. */
DIR *opendir(const char *path)
{
	static void *fn;
	const struct ibv_device *dev;
	char sysfs[PATH_MAX];

	if (rocemu_dev_file_probe(path, &dev, sysfs) == ROCEMU_DEV_FILE_SYSFS)
		path = sysfs;
	return ((DIR * (*)(const char *)) libc_next("opendir", &fn))(path);
}

/* open(2): the RDMA CM file is rocemud's (lib/cm/ucma.c), a device's sysfs file the daemon's. */
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
	if (rocemu_dev_file_is_ucma(path)) {
		int fd = rocemu_ucma_open(flags);

		if (fd < 0) {
			errno = -fd;
			return -1;
		}
		return fd;
	}
	if (rocemu_dev_file_probe(path, &dev, sysfs) == ROCEMU_DEV_FILE_SYSFS)
		return openat(AT_FDCWD, sysfs, flags, mode);
	return openat(AT_FDCWD, path, flags, mode);
}

/* open64(2): open, as in glibc on 64-bit targets, where O_LARGEFILE is implied. */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));

/* readlink(2): an emulated device's node is no link; its sysfs files are the daemon's. */
ssize_t readlink(const char *restrict path, char *restrict buf, size_t len)
{
	const struct ibv_device *dev;
	char sysfs[PATH_MAX];

	switch (rocemu_dev_file_probe(path, &dev, sysfs)) {
	case ROCEMU_DEV_FILE_NODE:
		errno = EINVAL;
		return -1;
	case ROCEMU_DEV_FILE_SYSFS:
		return readlinkat(AT_FDCWD, sysfs, buf, len);
	default:
		return readlinkat(AT_FDCWD, path, buf, len);
	}
}

/* write(2): a command to an RDMA CM file goes to rocemud (lib/cm/ucma.c). */
ssize_t write(int fd, const void *buf, size_t n)
{
	ssize_t ret;

	if (__builtin_expect(rocemu_ucma_write(fd, buf, n, &ret), 0))
		return ret;
	return rocemu_libc_write(fd, buf, n);
}

/* close(2): an RDMA CM file's descriptor lets go of the file first (lib/cm/ucma.c). */
int close(int fd)
{
	rocemu_ucma_close(fd);
	return rocemu_libc_close(fd);
}

/* fstat64(2): an RDMA CM file is a character device (lib/cm/ucma.c). */
int fstat64(int fd, struct stat64 *st)
{
	if (rocemu_ucma_fstat(fd, st))
		return 0;
	return fstatat64(fd, "", st, AT_EMPTY_PATH);
}

/* fstat(2): fstat64's answer. */
int fstat(int fd, struct stat *st)
{
	return fstat64(fd, (struct stat64 *)st);
}

/* mmap(2): a ConnectX-3 context's cmd_fd maps its QPs' doorbell pages (lib/mlx4/uar_map.c). */
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t offset)
{
	static void *fn;
	void *mapped;

	if (fd >= 0 && __builtin_expect(rocemu_mlx4_uar_mmap(addr, len, prot, flags, fd, offset,
							      &mapped), 0))
		return mapped;
	return ((void *(*)(void *, size_t, int, int, int, off64_t))libc_next("mmap64", &fn))(
		addr, len, prot, flags, fd, offset);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
	return mmap64(addr, len, prot, flags, fd, offset);
}
