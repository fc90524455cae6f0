/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The files libibverbs programs read through ibv_device.ibdev_path
 * (board_id, fw_ver, hca_type, node_guid...), the GID attributes UCX reads
 * (ports/1/gid_attrs/types/0, ndevs/0) and the driver link Open MPI reads
 * (device/driver, to mlx5_core), as the kernel's
 * /sys/class/infiniband/<dev>/ holds them, under <root>/<devname>/.
 */
#ifndef ROCEMU_EMULATOR_IBDEV_SYSFS_H
#define ROCEMU_EMULATOR_IBDEV_SYSFS_H

#include "emulator/device.h"

/* Create root (if needed) and root/<dev->name>/ with its files. Returns 0 or -errno. */
int rocemu_ibdev_sysfs_create(const char *root, const struct rocemu_device *dev);
/* Remove root/<dev->name>/ and its files (and root once empty). */
void rocemu_ibdev_sysfs_remove(const char *root, const struct rocemu_device *dev);

#endif /* ROCEMU_EMULATOR_IBDEV_SYSFS_H */
