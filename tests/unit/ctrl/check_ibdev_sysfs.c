/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The ibdev_path files (emulator/ctrl/ibdev_sysfs.c) in a directory of the
 * test's own: the values libibverbs' ibv_devinfo reads (fw_ver, node_guid,
 * node_type, hca_type, board_id), the GID attributes UCX reads, the
 * netdev's MAC (device/net/<ifname>/address), the PCI
 * function's ids and the links as the kernel's sysfs has them, two
 * devices side by side, and a removal that leaves nothing behind.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulator/ctrl/ibdev_sysfs.h"

/* Short enough that every path below them fits in PATH_MAX. */
static char dir[512], root[520];

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/rocemu-sysfs-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* The root does not exist yet: create makes it, remove takes it away. */
	snprintf(root, sizeof(root), "%s/sys", dir);
}

static void teardown(void)
{
	ck_assert_int_eq(rmdir(dir), 0);
}

static void device(struct rocemu_device *dev, unsigned int index, const char *name,
		   const char *addr)
{
	rocemu_device_init(dev, index, name, inet_addr(addr), ROCEMU_DEFAULT_NETDEV_MTU);
}

/* The one line of root/rel, without its newline. */
static const char *file_line(const char *rel)
{
	static char line[512];
	char path[PATH_MAX];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	n = fread(line, 1, sizeof(line) - 1, f);
	fclose(f);
	line[n] = '\0';
	ck_assert_msg(n > 0 && line[n - 1] == '\n', "%s: not one line ending in a newline", rel);
	line[n - 1] = '\0';
	ck_assert_ptr_null(strchr(line, '\n'));
	return line;
}

static const char *link_text(const char *rel)
{
	static char target[PATH_MAX];
	char path[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	n = readlink(path, target, sizeof(target) - 1);
	ck_assert_msg(n > 0, "%s: %s", path, strerror(errno));
	target[n] = '\0';
	return target;
}

static bool exists(const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return lstat(path, &st) == 0;
}

START_TEST(test_ibverbs_files)
{
	struct rocemu_device dev;
	struct ibv_device_attr attr;

	device(&dev, 0, "rocemu0", "198.51.100.7");
	ck_assert_int_eq(rocemu_ibdev_sysfs_create(root, &dev), 0);
	/* Read through the class link, as libibverbs reads <ibdev_path>/<file>. */
	rocemu_device_query(&dev, &attr);
	ck_assert_str_eq(file_line("rocemu0/fw_ver"), attr.fw_ver);
	/* The modified EUI-64 of MAC 02:00:c6:33:64:07, in the kernel's four groups. */
	ck_assert_str_eq(file_line("rocemu0/node_guid"), "0200:c6ff:fe33:6407");
	ck_assert_str_eq(file_line("rocemu0/sys_image_guid"), "0200:c6ff:fe33:6407");
	ck_assert_str_eq(file_line("rocemu0/node_type"), "1: CA");
	ck_assert_str_eq(file_line("rocemu0/hca_type"), "MT4119");
	ck_assert_str_eq(file_line("rocemu0/board_id"), "MT_0000000008");
	ck_assert_str_eq(file_line("rocemu0/hw_rev"), "0");
	ck_assert_ptr_nonnull(strstr(file_line("rocemu0/node_desc"), " rocemu0"));
	ck_assert_str_eq(file_line("rocemu0/ports/1/gid_attrs/types/0"), "RoCE v2");
	rocemu_ibdev_sysfs_remove(root, &dev);
}
END_TEST

START_TEST(test_pci_function)
{
	struct rocemu_device dev;
	char cpulist[32];

	device(&dev, 0, "rocemu0", "198.51.100.7");
	ck_assert_int_eq(rocemu_ibdev_sysfs_create(root, &dev), 0);
	/* The kernel's layout: the class link into the function, device back up to it. */
	ck_assert_str_eq(link_text("rocemu0"), "devices/pci0000:00/0000:3b:00.0/infiniband/rocemu0");
	ck_assert_str_eq(link_text("rocemu0/device"), "../../../0000:3b:00.0");
	ck_assert_str_eq(link_text("devices/pci0000:00/0000:3b:00.0/driver"),
			 "../../../bus/pci/drivers/mlx5_core");
	/* UCX reads the ids through rocemu0/device: a ConnectX-5 of Mellanox's. */
	ck_assert_str_eq(file_line("rocemu0/device/vendor"), "0x15b3");
	ck_assert_str_eq(file_line("rocemu0/device/device"), "0x1017");
	ck_assert_str_eq(file_line("rocemu0/device/subsystem_vendor"), "0x15b3");
	ck_assert_str_eq(file_line("rocemu0/device/class"), "0x020000");
	ck_assert_str_eq(file_line("rocemu0/device/numa_node"), "-1");
	ck_assert_str_eq(file_line("rocemu0/device/current_link_speed"), "8.0 GT/s PCIe");
	ck_assert_str_eq(file_line("rocemu0/device/max_link_width"), "16");
	snprintf(cpulist, sizeof(cpulist), "0-%ld", sysconf(_SC_NPROCESSORS_CONF) - 1);
	ck_assert_str_eq(file_line("rocemu0/device/local_cpulist"), cpulist);
	rocemu_ibdev_sysfs_remove(root, &dev);
}
END_TEST

/* The cpumask as the kernel prints it (%*pb): every CPU's bit set, 32 to a comma-separated word. */
/* A ConnectX-3 Pro: its ids, board, firmware, an x8 link and mlx4_core, whose mlx5 transports UCX does not offer. */
START_TEST(test_cx3_identity)
{
	struct rocemu_device dev;
	struct ibv_device_attr attr;

	device(&dev, 0, "mlx4_0", "198.51.100.7");
	dev.model = ROCEMU_MODEL_CX3;
	ck_assert_int_eq(rocemu_ibdev_sysfs_create(root, &dev), 0);
	rocemu_device_query(&dev, &attr);
	ck_assert_str_eq(attr.fw_ver, "2.42.5000");
	ck_assert_uint_eq(attr.vendor_id, 0x02c9);
	ck_assert_uint_eq(attr.vendor_part_id, 4103);
	ck_assert_uint_eq(attr.max_qp_wr, 16351);
	ck_assert(!(attr.device_cap_flags & IBV_DEVICE_RAW_IP_CSUM));
	ck_assert(attr.device_cap_flags & IBV_DEVICE_XRC);
	ck_assert_str_eq(file_line("mlx4_0/fw_ver"), "2.42.5000");
	ck_assert_str_eq(file_line("mlx4_0/hca_type"), "MT4103");
	ck_assert_str_eq(file_line("mlx4_0/board_id"), "MT_1090111023");
	ck_assert_str_eq(file_line("mlx4_0/device/device"), "0x1007");
	ck_assert_str_eq(file_line("mlx4_0/device/vendor"), "0x15b3");
	ck_assert_str_eq(file_line("mlx4_0/device/max_link_width"), "8");
	ck_assert_str_eq(link_text("devices/pci0000:00/0000:3b:00.0/driver"),
			 "../../../bus/pci/drivers/mlx4_core");
	rocemu_ibdev_sysfs_remove(root, &dev);
}
END_TEST

START_TEST(test_local_cpus_mask)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF), counted = 0;
	struct rocemu_device dev;
	const char *mask, *p;
	size_t words = 1;

	device(&dev, 0, "rocemu0", "198.51.100.7");
	ck_assert_int_eq(rocemu_ibdev_sysfs_create(root, &dev), 0);
	mask = file_line("rocemu0/device/local_cpus");
	for (p = mask; *p; p++) {
		if (*p == ',') {
			words++;
			continue;
		}
		ck_assert_ptr_nonnull(strchr("0123456789abcdef", *p));
		counted += __builtin_popcount((unsigned int)(*p <= '9' ? *p - '0' : *p - 'a' + 10));
	}
	ck_assert_int_eq(counted, cpus);
	ck_assert_uint_eq(words, (size_t)(cpus + 31) / 32);
	/* No leading zero digit: the first word is only as wide as its bits. */
	ck_assert_int_ne(mask[0], '0');
	rocemu_ibdev_sysfs_remove(root, &dev);
}
END_TEST

/* ndevs/0 names the interface holding the address, else one whose subnet holds it: lo for 127.x. */
START_TEST(test_gid_netdev)
{
	struct rocemu_device dev;

	device(&dev, 0, "rocemu0", "127.0.0.1");
	ck_assert_int_eq(rocemu_ibdev_sysfs_create(root, &dev), 0);
	ck_assert_str_eq(file_line("rocemu0/ports/1/gid_attrs/ndevs/0"), "lo");
	/* That netdev below the PCI function carries the port's MAC, as a ConnectX's does. */
	ck_assert_str_eq(file_line("rocemu0/device/net/lo/address"), "02:00:7f:00:00:01");
	rocemu_ibdev_sysfs_remove(root, &dev);
	/* No interface's subnet holds TEST-NET-3: the file is there, empty. */
	device(&dev, 0, "rocemu0", "203.0.113.9");
	ck_assert_int_eq(rocemu_ibdev_sysfs_create(root, &dev), 0);
	ck_assert_str_eq(file_line("rocemu0/ports/1/gid_attrs/ndevs/0"), "");
	/* Then the netdev is named as the device; a configured MAC is the one it shows. */
	rocemu_ibdev_sysfs_remove(root, &dev);
	rocemu_device_set_mac(&dev, (const uint8_t[6]){ 0x0e, 0x11, 0x22, 0x33, 0x44, 0x55 });
	ck_assert_int_eq(rocemu_ibdev_sysfs_create(root, &dev), 0);
	ck_assert_str_eq(file_line("rocemu0/device/net/rocemu0/address"), "0e:11:22:33:44:55");
	rocemu_ibdev_sysfs_remove(root, &dev);
}
END_TEST

START_TEST(test_two_devices_and_removal)
{
	struct rocemu_device a, b;

	device(&a, 0, "rocemu0", "198.51.100.7");
	device(&b, 1, "mlx5_0", "198.51.100.8");
	ck_assert_int_eq(rocemu_ibdev_sysfs_create(root, &a), 0);
	ck_assert_int_eq(rocemu_ibdev_sysfs_create(root, &b), 0);
	/* Device index i is function 0000:(3b + i):00.0. */
	ck_assert_str_eq(link_text("mlx5_0"), "devices/pci0000:00/0000:3c:00.0/infiniband/mlx5_0");
	ck_assert_str_eq(file_line("mlx5_0/node_guid"), "0200:c6ff:fe33:6408");
	ck_assert_str_eq(file_line("rocemu0/node_guid"), "0200:c6ff:fe33:6407");
	/* The first one gone, the second one's tree stays whole. */
	rocemu_ibdev_sysfs_remove(root, &a);
	ck_assert(!exists("rocemu0"));
	ck_assert(!exists("devices/pci0000:00/0000:3b:00.0"));
	ck_assert_str_eq(file_line("mlx5_0/hca_type"), "MT4119");
	ck_assert_str_eq(file_line("mlx5_0/device/vendor"), "0x15b3");
	/* The last one takes the root with it. */
	rocemu_ibdev_sysfs_remove(root, &b);
	ck_assert_int_eq(access(root, F_OK), -1);
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

/* A daemon killed before it removed its tree: the next one makes it again over it. */
START_TEST(test_create_over_leftovers)
{
	struct rocemu_device dev;

	device(&dev, 0, "rocemu0", "198.51.100.7");
	ck_assert_int_eq(rocemu_ibdev_sysfs_create(root, &dev), 0);
	ck_assert_int_eq(rocemu_ibdev_sysfs_create(root, &dev), 0);
	ck_assert_str_eq(link_text("rocemu0"), "devices/pci0000:00/0000:3b:00.0/infiniband/rocemu0");
	ck_assert_str_eq(file_line("rocemu0/hca_type"), "MT4119");
	rocemu_ibdev_sysfs_remove(root, &dev);
	ck_assert_int_eq(access(root, F_OK), -1);
}
END_TEST

START_TEST(test_errors)
{
	struct rocemu_device dev;
	char path[PATH_MAX + 16];

	device(&dev, 0, "rocemu0", "198.51.100.7");
	/* A root whose parent is missing. */
	snprintf(path, sizeof(path), "%s/missing/sys", dir);
	ck_assert_int_eq(rocemu_ibdev_sysfs_create(path, &dev), -ENOENT);
	/* A root too long for the paths below it. */
	memset(path, 'r', PATH_MAX - 8);
	path[0] = '/';
	path[PATH_MAX - 8] = '\0';
	ck_assert_int_eq(rocemu_ibdev_sysfs_create(path, &dev), -ENAMETOOLONG);
}
END_TEST

static Suite *ibdev_sysfs_suite(void)
{
	Suite *s = suite_create("ibdev_sysfs");
	TCase *tc = tcase_create("files");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_ibverbs_files);
	tcase_add_test(tc, test_pci_function);
	tcase_add_test(tc, test_cx3_identity);
	tcase_add_test(tc, test_local_cpus_mask);
	tcase_add_test(tc, test_gid_netdev);
	tcase_add_test(tc, test_two_devices_and_removal);
	tcase_add_test(tc, test_create_over_leftovers);
	tcase_add_test(tc, test_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ibdev_sysfs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
