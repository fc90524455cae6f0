/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The files programs probe to find RDMA devices, told apart here for the
 * libc overrides (libc_overrides.c) to answer for emulated devices only
 * (UCX stat()s and access()es /dev/infiniband/<dev_name>, then
 * open()s /sys/class/infiniband/<dev>/ports/1/gid_attrs/...; Open MPI
 * readlink()s /sys/class/infiniband/<dev>/device/driver):
 * - /dev/infiniband/<dev_name> reads as the character device uverbs makes
 *   (mode 0666, major 231, minor 192 + index); opening it still fails, and
 *   readlink() says EINVAL (not a link);
 * - /sys/class/infiniband/<dev>[/...] is the daemon's tree at ibdev_path,
 *   or, in a process that lists no devices (`ls`, `cat` under `rocemu run`),
 *   <runtime dir>/sys/<dev> when the daemon's tree has that device;
 * - /dev/infiniband/rdma_cm opens rocemud's RDMA CM (lib/cm/ucma.c) once
 *   this process has listed emulated devices, as librdmacm does before it
 *   opens it.
 * A device node or the RDMA CM counts once this process listed it
 * (ibv_get_device_list), so the shim stays inert. Any other path costs one
 * prefix test.
 */
#include "lib/shim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "rocemu/runtime_dir.h"

#define DEV_NODE_PREFIX "/dev/infiniband/"
#define SYSFS_PREFIX "/sys/class/infiniband/"
#define UCMA_DEV_NODE DEV_NODE_PREFIX "rdma_cm"	/* the RDMA CM file: lib/cm/ucma.c */
#define UVERBS_MAJOR 231	/* the kernel's IB_UVERBS_MAJOR and IB_UVERBS_BASE_MINOR */
#define UVERBS_BASE_MINOR 192

static bool has_prefix(const char *path, const char *prefix, size_t len)
{
	return !strncmp(path, prefix, len);
}

/*
 * The daemon's tree of device name (len bytes) in the runtime dir, found
 * without asking the daemon: its entry there is a link to the device's
 * directory, as in sysfs (the tree's other entry, "devices", is a directory).
 */
static bool tree_of_unlisted(const char *name, size_t len, char tree[PATH_MAX])
{
	char dir[PATH_MAX];
	struct stat64 st;
	int n;

	if (!len || rocemu_runtime_dir(dir, sizeof(dir)))
		return false;
	n = snprintf(tree, PATH_MAX, "%s/sys/%.*s", dir, (int)len, name);
	return n > 0 && n < PATH_MAX && !fstatat64(AT_FDCWD, tree, &st, AT_SYMLINK_NOFOLLOW) &&
	       S_ISLNK(st.st_mode);
}

enum rocemu_dev_file rocemu_dev_file_probe(const char *path, const struct ibv_device **dev,
					   char sysfs[PATH_MAX])
{
	const char *name, *rest;
	char tree[PATH_MAX];

	if (!path || path[0] != '/')
		return ROCEMU_DEV_FILE_OTHER;
	if (has_prefix(path, DEV_NODE_PREFIX, sizeof(DEV_NODE_PREFIX) - 1)) {
		name = path + sizeof(DEV_NODE_PREFIX) - 1;
		*dev = rocemu_device_named(name, strlen(name), true);
		return *dev ? ROCEMU_DEV_FILE_NODE : ROCEMU_DEV_FILE_OTHER;
	}
	if (!has_prefix(path, SYSFS_PREFIX, sizeof(SYSFS_PREFIX) - 1))
		return ROCEMU_DEV_FILE_OTHER;
	name = path + sizeof(SYSFS_PREFIX) - 1;
	rest = strchrnul(name, '/');
	*dev = rocemu_device_named(name, (size_t)(rest - name), false);
	if (*dev) {
		if (snprintf(sysfs, PATH_MAX, "%s%s", (*dev)->ibdev_path, rest) >= PATH_MAX)
			return ROCEMU_DEV_FILE_OTHER;
		return ROCEMU_DEV_FILE_SYSFS;
	}
	if (rocemu_devices_listed() || !tree_of_unlisted(name, (size_t)(rest - name), tree) ||
	    snprintf(sysfs, PATH_MAX, "%s%s", tree, rest) >= PATH_MAX)
		return ROCEMU_DEV_FILE_OTHER;
	return ROCEMU_DEV_FILE_SYSFS;
}

bool rocemu_dev_file_is_ucma(const char *path)
{
	return !strcmp(path, UCMA_DEV_NODE) && rocemu_devices_listed();
}

void rocemu_dev_node_stat(const struct ibv_device *dev, struct stat64 *st)
{
	const struct rocemu_device *d = rocemu_device_of((struct ibv_device *)dev);

	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0666;
	st->st_nlink = 1;
	st->st_rdev = makedev(UVERBS_MAJOR, UVERBS_BASE_MINOR + d->info.index);
	st->st_blksize = 4096;
}

int rocemu_dev_node_access(int mode)
{
	if (mode & X_OK) {
		errno = EACCES;
		return -1;
	}
	return 0;
}
