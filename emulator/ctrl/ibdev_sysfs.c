/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/ctrl/ibdev_sysfs.h"

#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PCI_ROOT "devices/pci0000:00"	/* the host bridge the functions hang below */
#define PCI_FIRST_BUS 0x3b		/* device index i is the function 0000:(0x3b + i):00.0 */

/* Where a node lives: the tree's root, the PCI function, the RDMA device or the netdev below it. */
enum sysfs_base { BASE_ROOT, BASE_PCI, BASE_IBDEV, BASE_NETDEV };

enum sysfs_file {
	SYSFS_BOARD_ID, SYSFS_FW_VER, SYSFS_HCA_TYPE, SYSFS_HW_REV, SYSFS_NODE_TYPE,
	SYSFS_NODE_GUID, SYSFS_SYS_IMAGE_GUID, SYSFS_NODE_DESC,
	SYSFS_GID0_TYPE, SYSFS_GID0_NDEV,
	SYSFS_PCI_VENDOR, SYSFS_PCI_DEVICE, SYSFS_PCI_SUBSYS_VENDOR, SYSFS_PCI_SUBSYS_DEVICE,
	SYSFS_PCI_CLASS, SYSFS_PCI_REVISION, SYSFS_PCI_NUMA_NODE, SYSFS_PCI_LOCAL_CPUS,
	SYSFS_PCI_LOCAL_CPULIST, SYSFS_PCI_LINK_SPEED, SYSFS_PCI_LINK_WIDTH,
	SYSFS_PCI_MAX_LINK_SPEED, SYSFS_PCI_MAX_LINK_WIDTH, SYSFS_NETDEV_ADDRESS, SYSFS_COUNT
};

struct sysfs_node {
	enum sysfs_base base;
	const char *name;
};

static const struct sysfs_node sysfs_files[SYSFS_COUNT] = {
	[SYSFS_BOARD_ID] = { BASE_IBDEV, "board_id" }, [SYSFS_FW_VER] = { BASE_IBDEV, "fw_ver" },
	[SYSFS_HCA_TYPE] = { BASE_IBDEV, "hca_type" }, [SYSFS_HW_REV] = { BASE_IBDEV, "hw_rev" },
	[SYSFS_NODE_TYPE] = { BASE_IBDEV, "node_type" },
	[SYSFS_NODE_GUID] = { BASE_IBDEV, "node_guid" },
	[SYSFS_SYS_IMAGE_GUID] = { BASE_IBDEV, "sys_image_guid" },
	[SYSFS_NODE_DESC] = { BASE_IBDEV, "node_desc" },
	[SYSFS_GID0_TYPE] = { BASE_IBDEV, "ports/1/gid_attrs/types/0" },
	[SYSFS_GID0_NDEV] = { BASE_IBDEV, "ports/1/gid_attrs/ndevs/0" },
	/* UCX picks its mlx5 transports by vendor and device; the rest as on a ConnectX-5 */
	[SYSFS_PCI_VENDOR] = { BASE_PCI, "vendor" }, [SYSFS_PCI_DEVICE] = { BASE_PCI, "device" },
	[SYSFS_PCI_SUBSYS_VENDOR] = { BASE_PCI, "subsystem_vendor" },
	[SYSFS_PCI_SUBSYS_DEVICE] = { BASE_PCI, "subsystem_device" },
	[SYSFS_PCI_CLASS] = { BASE_PCI, "class" }, [SYSFS_PCI_REVISION] = { BASE_PCI, "revision" },
	[SYSFS_PCI_NUMA_NODE] = { BASE_PCI, "numa_node" },
	[SYSFS_PCI_LOCAL_CPUS] = { BASE_PCI, "local_cpus" },
	[SYSFS_PCI_LOCAL_CPULIST] = { BASE_PCI, "local_cpulist" },
	[SYSFS_PCI_LINK_SPEED] = { BASE_PCI, "current_link_speed" },
	[SYSFS_PCI_LINK_WIDTH] = { BASE_PCI, "current_link_width" },
	[SYSFS_PCI_MAX_LINK_SPEED] = { BASE_PCI, "max_link_speed" },
	[SYSFS_PCI_MAX_LINK_WIDTH] = { BASE_PCI, "max_link_width" },
	/* the port's MAC, where ibdev2netdev and DPDK find a ConnectX's netdev */
	[SYSFS_NETDEV_ADDRESS] = { BASE_NETDEV, "address" },
};

/* The directories the files and links need, parents first. */
static const struct sysfs_node sysfs_dirs[] = {
	{ BASE_ROOT, "devices" }, { BASE_ROOT, PCI_ROOT }, { BASE_PCI, "" },
	{ BASE_PCI, "infiniband" }, { BASE_IBDEV, "" }, { BASE_IBDEV, "ports" },
	{ BASE_IBDEV, "ports/1" }, { BASE_IBDEV, "ports/1/gid_attrs" },
	{ BASE_IBDEV, "ports/1/gid_attrs/types" }, { BASE_IBDEV, "ports/1/gid_attrs/ndevs" },
	{ BASE_PCI, "net" }, { BASE_NETDEV, "" },
};
#define SYSFS_DIR_COUNT (sizeof(sysfs_dirs) / sizeof(sysfs_dirs[0]))

/*
 * Links as the kernel makes them: <root>/<dev> stands for /sys/class/infiniband/<dev>, a
 * link into the device's PCI function (UCX reads the PCI ids two levels above its real
 * path), whose driver link Open MPI matches to mlx*.
 */
enum sysfs_link { LINK_CLASS, LINK_IBDEV_DEVICE, LINK_PCI_DRIVER, LINK_COUNT };

static const struct sysfs_node sysfs_links[LINK_COUNT] = {
	[LINK_CLASS] = { BASE_ROOT, NULL },	/* named after the device */
	[LINK_IBDEV_DEVICE] = { BASE_IBDEV, "device" },
	[LINK_PCI_DRIVER] = { BASE_PCI, "driver" },
};

/* The PCI function's name, domain:bus:slot.function. */
static void pci_name(const struct rocemu_device *dev, char buf[16])
{
	snprintf(buf, 16, "0000:%02x:00.0", (PCI_FIRST_BUS + dev->index) & 0xff);
}

/*
 * The interface holding the device's address, else the first whose IPv4
 * subnet holds it (lo for 127.x), as ndevs names it: two interfaces of one
 * subnet are told apart by their own addresses.
 */
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
		if (a->sin_addr.s_addr == dev->ipv4) {
			snprintf(buf, len, "%s", ifa->ifa_name);
			break;
		}
		if (!buf[0] && ((a->sin_addr.s_addr ^ dev->ipv4) & m->sin_addr.s_addr) == 0)
			snprintf(buf, len, "%s", ifa->ifa_name);
	}
	freeifaddrs(ifs);
}

/* The netdev below the PCI function: the interface ndevs names, else one named as the device. */
static void netdev_dir_name(const struct rocemu_device *dev, char *buf, size_t len)
{
	netdev_name(dev, buf, len);
	if (!buf[0])
		snprintf(buf, len, "%s", dev->name);
}

/* root/<base>/name into path; 0 or -ENAMETOOLONG. */
static int node_path(char path[PATH_MAX], const char *root, const struct rocemu_device *dev,
		     const struct sysfs_node *node)
{
	const char *name = node->name ? node->name : dev->name;
	const char *sep = name[0] ? "/" : "";
	char pci[16], netdev[IF_NAMESIZE + ROCEMU_DEV_NAME_MAX];
	int n;

	pci_name(dev, pci);
	switch (node->base) {
	case BASE_PCI:
		n = snprintf(path, PATH_MAX, "%s/" PCI_ROOT "/%s%s%s", root, pci, sep, name);
		break;
	case BASE_IBDEV:
		n = snprintf(path, PATH_MAX, "%s/" PCI_ROOT "/%s/infiniband/%s%s%s", root, pci,
			     dev->name, sep, name);
		break;
	case BASE_NETDEV:
		netdev_dir_name(dev, netdev, sizeof(netdev));
		n = snprintf(path, PATH_MAX, "%s/" PCI_ROOT "/%s/net/%s%s%s", root, pci, netdev,
			     sep, name);
		break;
	default:
		n = snprintf(path, PATH_MAX, "%s/%s", root, name);
		break;
	}
	return n < PATH_MAX ? 0 : -ENAMETOOLONG;
}

static void link_target(enum sysfs_link l, const struct rocemu_device *dev, char *buf, size_t len)
{
	char pci[16];

	pci_name(dev, pci);
	switch (l) {
	case LINK_CLASS:
		snprintf(buf, len, PCI_ROOT "/%s/infiniband/%s", pci, dev->name);
		break;
	case LINK_IBDEV_DEVICE:
		snprintf(buf, len, "../../../%s", pci);
		break;
	default:
		snprintf(buf, len, "../../../bus/pci/drivers/%s", rocemu_device_ids(dev)->driver);
		break;
	}
}

/* The CPUs near the function, all of them, as the kernel prints a cpumask (%*pb). */
static void local_cpus_text(char *buf, size_t len)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	int words, w, width, bits;
	size_t at = 0;

	if (cpus < 1)
		cpus = 1;
	words = (int)((cpus + 31) / 32);
	for (w = words - 1; w >= 0 && at < len; w--) {
		bits = (int)(cpus - 32L * w < 32 ? cpus - 32L * w : 32);
		/* the first word only as wide as its bits need, the others full */
		width = w == words - 1 ? (bits + 3) / 4 : 8;
		at += (size_t)snprintf(buf + at, len - at, "%s%0*lx", w == words - 1 ? "" : ",",
				       width, bits == 32 ? 0xffffffffUL : (1UL << bits) - 1);
	}
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
		snprintf(buf, len, "%s", rocemu_device_ids(dev)->board_id);
		break;
	case SYSFS_FW_VER:
		rocemu_device_query(dev, &attr);
		snprintf(buf, len, "%s", attr.fw_ver);
		break;
	case SYSFS_HCA_TYPE:
		snprintf(buf, len, "MT%u", rocemu_device_ids(dev)->part_id);
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
	case SYSFS_PCI_VENDOR:
	case SYSFS_PCI_SUBSYS_VENDOR:
		snprintf(buf, len, "0x%04x", ROCEMU_PCI_VENDOR_ID);
		break;
	case SYSFS_PCI_DEVICE:
		snprintf(buf, len, "0x%04x", rocemu_device_ids(dev)->part_id);
		break;
	case SYSFS_PCI_SUBSYS_DEVICE:
		snprintf(buf, len, "0x%04x", rocemu_device_ids(dev)->pci_subsys_device);
		break;
	case SYSFS_PCI_CLASS:
		snprintf(buf, len, "0x020000");	/* Ethernet controller */
		break;
	case SYSFS_PCI_REVISION:
		snprintf(buf, len, "0x00");
		break;
	case SYSFS_PCI_NUMA_NODE:
		snprintf(buf, len, "-1");	/* no node nearer than another */
		break;
	case SYSFS_PCI_LOCAL_CPUS:
		local_cpus_text(buf, len);
		break;
	case SYSFS_PCI_LOCAL_CPULIST:
		snprintf(buf, len, "0-%ld", sysconf(_SC_NPROCESSORS_CONF) - 1);
		break;
	case SYSFS_PCI_LINK_SPEED:
	case SYSFS_PCI_MAX_LINK_SPEED:
		snprintf(buf, len, "8.0 GT/s PCIe");	/* both are PCIe Gen3 */
		break;
	case SYSFS_PCI_LINK_WIDTH:
	case SYSFS_PCI_MAX_LINK_WIDTH:
		/* a ConnectX-5 x16, a ConnectX-3 Pro x8 */
		snprintf(buf, len, "%d", dev->model == ROCEMU_MODEL_CX3 ? 8 : 16);
		break;
	case SYSFS_NETDEV_ADDRESS:
		rocemu_device_mac_text(dev, buf);
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
	unsigned int d;
	int f, l, err;

	if (mkdir(root, 0700) && errno != EEXIST)
		return -errno;
	for (d = 0; d < SYSFS_DIR_COUNT; d++) {
		err = node_path(path, root, dev, &sysfs_dirs[d]);
		if (err)
			return err;
		if (mkdir(path, 0700) && errno != EEXIST)
			return -errno;
	}
	for (f = 0; f < SYSFS_COUNT; f++) {
		err = node_path(path, root, dev, &sysfs_files[f]);
		if (err)
			return err;
		sysfs_content(f, dev, text, sizeof(text));
		err = write_text_file(path, text);
		if (err)
			return err;
	}
	for (l = 0; l < LINK_COUNT; l++) {
		err = node_path(path, root, dev, &sysfs_links[l]);
		if (err)
			return err;
		link_target(l, dev, text, sizeof(text));
		unlink(path);	/* a daemon before this one may have left it */
		if (symlink(text, path))
			return -errno;
	}
	return 0;
}

void rocemu_ibdev_sysfs_remove(const char *root, const struct rocemu_device *dev)
{
	char path[PATH_MAX];
	unsigned int d;
	int f, l;

	for (f = 0; f < SYSFS_COUNT; f++)
		if (!node_path(path, root, dev, &sysfs_files[f]))
			unlink(path);
	for (l = 0; l < LINK_COUNT; l++)
		if (!node_path(path, root, dev, &sysfs_links[l]))
			unlink(path);
	/* directories other devices share fail harmlessly while they remain */
	for (d = SYSFS_DIR_COUNT; d-- > 0;)
		if (!node_path(path, root, dev, &sysfs_dirs[d]))
			rmdir(path);
	rmdir(root);
}
