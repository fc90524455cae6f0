/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/ibdev_sysfs.h"

#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum sysfs_file {
	SYSFS_BOARD_ID, SYSFS_FW_VER, SYSFS_HCA_TYPE, SYSFS_HW_REV, SYSFS_NODE_TYPE,
	SYSFS_NODE_GUID, SYSFS_SYS_IMAGE_GUID, SYSFS_NODE_DESC,
	SYSFS_GID0_TYPE, SYSFS_GID0_NDEV, SYSFS_COUNT
};

static const char *const sysfs_names[SYSFS_COUNT] = {
	[SYSFS_BOARD_ID] = "board_id", [SYSFS_FW_VER] = "fw_ver",
	[SYSFS_HCA_TYPE] = "hca_type", [SYSFS_HW_REV] = "hw_rev",
	[SYSFS_NODE_TYPE] = "node_type", [SYSFS_NODE_GUID] = "node_guid",
	[SYSFS_SYS_IMAGE_GUID] = "sys_image_guid", [SYSFS_NODE_DESC] = "node_desc",
	[SYSFS_GID0_TYPE] = "ports/1/gid_attrs/types/0",
	[SYSFS_GID0_NDEV] = "ports/1/gid_attrs/ndevs/0",
};

/* The directories the files and links need, parents first. */
static const char *const sysfs_dirs[] = {
	"ports", "ports/1", "ports/1/gid_attrs", "ports/1/gid_attrs/types",
	"ports/1/gid_attrs/ndevs", "device",
};
#define SYSFS_DIR_COUNT (sizeof(sysfs_dirs) / sizeof(sysfs_dirs[0]))

/* Links as a ConnectX's PCI function has them: Open MPI matches the driver's name to mlx*. */
static const struct sysfs_link {
	const char *name, *target;
} sysfs_links[] = {
	{ "device/driver", "../../../../bus/pci/drivers/mlx5_core" },
};
#define SYSFS_LINK_COUNT (sizeof(sysfs_links) / sizeof(sysfs_links[0]))

/* The interface whose IPv4 subnet holds the device's address (lo for 127.x), as ndevs names it. */
static void netdev_name(const struct rocemu_device *dev, char *buf, size_t len)
{
	struct ifaddrs *ifs, *ifa;

	buf[0] = '\0';
	if (getifaddrs(&ifs))
		return;
	for (ifa = ifs; ifa; ifa = ifa->ifa_next) {
		const struct sockaddr_in *a = (const void *)ifa->ifa_addr;
		const struct sockaddr_in *m = (const void *)ifa->ifa_netmask;

		if (!a || !m || a->sin_family != AF_INET)
			continue;
		if (((a->sin_addr.s_addr ^ dev->ipv4) & m->sin_addr.s_addr) == 0) {
			snprintf(buf, len, "%s", ifa->ifa_name);
			break;
		}
	}
	freeifaddrs(ifs);
}

/* The GUID as the kernel prints it: four groups of four hex digits. */
static void guid_text(const struct rocemu_device *dev, char *buf, size_t len)
{
	const uint8_t *g = (const uint8_t *)&dev->node_guid;

	snprintf(buf, len, "%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		 g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7]);
}

static void sysfs_content(enum sysfs_file f, const struct rocemu_device *dev,
			  char *buf, size_t len)
{
	struct ibv_device_attr attr;
	char host[HOST_NAME_MAX + 1] = "localhost";

	switch (f) {
	case SYSFS_BOARD_ID:
		snprintf(buf, len, "MT_0000000008");
		break;
	case SYSFS_FW_VER:
		rocemu_device_query(dev, &attr);
		snprintf(buf, len, "%s", attr.fw_ver);
		break;
	case SYSFS_HCA_TYPE:
		snprintf(buf, len, "MT4119");
		break;
	case SYSFS_HW_REV:
		snprintf(buf, len, "0");
		break;
	case SYSFS_NODE_TYPE:
		snprintf(buf, len, "1: CA");
		break;
	case SYSFS_NODE_GUID:
	case SYSFS_SYS_IMAGE_GUID:
		guid_text(dev, buf, len);
		break;
	case SYSFS_NODE_DESC:
		gethostname(host, sizeof(host) - 1);
		snprintf(buf, len, "%s %s", host, dev->name);
		break;
	case SYSFS_GID0_TYPE:
		snprintf(buf, len, "RoCE v2");	/* GID 0 is the ::ffff:a.b.c.d RoCE v2 GID */
		break;
	case SYSFS_GID0_NDEV:
		netdev_name(dev, buf, len);
		break;
	default:
		buf[0] = '\0';
		break;
	}
}

static int write_text_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return -errno;
	if (fprintf(f, "%s\n", text) < 0)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int rocemu_ibdev_sysfs_create(const char *root, const struct rocemu_device *dev)
{
	char path[PATH_MAX], text[256];
	unsigned int d, l;
	int f, err;

	if (mkdir(root, 0700) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s", root, dev->name);
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	for (d = 0; d < SYSFS_DIR_COUNT; d++) {
		if (snprintf(path, sizeof(path), "%s/%s/%s", root, dev->name,
			     sysfs_dirs[d]) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		if (mkdir(path, 0700) && errno != EEXIST)
			return -errno;
	}
	for (f = 0; f < SYSFS_COUNT; f++) {
		if (snprintf(path, sizeof(path), "%s/%s/%s", root, dev->name,
			     sysfs_names[f]) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		sysfs_content(f, dev, text, sizeof(text));
		err = write_text_file(path, text);
		if (err)
			return err;
	}
	for (l = 0; l < SYSFS_LINK_COUNT; l++) {
		if (snprintf(path, sizeof(path), "%s/%s/%s", root, dev->name,
			     sysfs_links[l].name) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		unlink(path);	/* a daemon before this one may have left it */
		if (symlink(sysfs_links[l].target, path))
			return -errno;
	}
	return 0;
}

void rocemu_ibdev_sysfs_remove(const char *root, const struct rocemu_device *dev)
{
	char path[PATH_MAX];
	unsigned int d, l;
	int f;

	for (f = 0; f < SYSFS_COUNT; f++) {
		snprintf(path, sizeof(path), "%s/%s/%s", root, dev->name, sysfs_names[f]);
		unlink(path);
	}
	for (l = 0; l < SYSFS_LINK_COUNT; l++) {
		snprintf(path, sizeof(path), "%s/%s/%s", root, dev->name, sysfs_links[l].name);
		unlink(path);
	}
	for (d = SYSFS_DIR_COUNT; d-- > 0;) {
		snprintf(path, sizeof(path), "%s/%s/%s", root, dev->name, sysfs_dirs[d]);
		rmdir(path);
	}
	snprintf(path, sizeof(path), "%s/%s", root, dev->name);
	rmdir(path);
	rmdir(root);	/* fails harmlessly while other devices remain */
}
