/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The files libibverbs programs read through ibv_device.ibdev_path
 * (board_id, fw_ver, hca_type, node_guid...), the GID attributes UCX reads
 * (ports/1/gid_attrs/types/0, ndevs/0) and the device's PCI function as
 * the kernel's sysfs has them: <root>/<dev> is a link, as
 * /sys/class/infiniband/<dev> is, to
 * <root>/devices/pci0000:00/<bdf>/infiniband/<dev>, whose device link names
 * the function <bdf> with the PCI ids of the adapter it plays, a
 * ConnectX-5's or a ConnectX-3 Pro's (UCX reads vendor and device two
 * levels above the link's real path to choose its mlx5 transports), its
 * link speed and width, and a driver link to mlx5_core or mlx4_core
 * (Open MPI's test for a ConnectX), and its netdev, net/<ifname>/address
 * the port's MAC (ifname: the interface ndevs/0 names, else the device's
 * name). Device index i is function 0000:(3b+i):00.0.
 */
#ifndef ROCEMU_EMULATOR_IBDEV_SYSFS_H
#define ROCEMU_EMULATOR_IBDEV_SYSFS_H

#include "emulator/core/device.h"

/* Create root (if needed), root/<dev->name> and the tree it links to. Returns 0 or -errno. */
int rocemu_ibdev_sysfs_create(const char *root, const struct rocemu_device *dev);
/* Remove root/<dev->name> and its tree (the directories and root once no device is left). */
void rocemu_ibdev_sysfs_remove(const char *root, const struct rocemu_device *dev);

#endif /* ROCEMU_EMULATOR_IBDEV_SYSFS_H */
