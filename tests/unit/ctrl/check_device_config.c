/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The device list of ROCEMU_DEVICES (emulator/ctrl/device_config.c): what
 * `name=ipv4[/mtu][/key=value...],...` gives (the MTU, a MAC, a VXLAN VNI
 * and its remotes), the default for an empty or unset value, and each
 * malformed entry refused with EINVAL and a reason naming it.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/ctrl/device_config.h"

/* TEST-NET-2 and -3 (RFC 5737): no interface of the test machine holds them, so no link MTU applies. */
#define ADDR_A "198.51.100.7"
#define ADDR_B "203.0.113.9"

static struct rocemu_device devs[ROCEMU_MAX_DEVICES];
static char err[256];

static uint32_t ip(const char *text)
{
	struct in_addr a;

	ck_assert_int_eq(inet_pton(AF_INET, text, &a), 1);
	return a.s_addr;
}

/* Parse spec expecting a refusal; the count is 0 and the reason names needle. */
static void expect_refused(const char *spec, const char *needle)
{
	unsigned int count = 99;

	err[0] = '\0';
	ck_assert_int_eq(rocemu_devices_parse(spec, devs, &count, err, sizeof(err)), -EINVAL);
	ck_assert_uint_eq(count, 0);
	ck_assert_msg(strstr(err, needle), "\"%s\": reason \"%s\" does not name \"%s\"", spec, err,
		      needle);
}

START_TEST(test_one_device)
{
	unsigned int count = 0;

	ck_assert_int_eq(rocemu_devices_parse("dev0=" ADDR_A, devs, &count, err, sizeof(err)), 0);
	ck_assert_uint_eq(count, 1);
	ck_assert_str_eq(devs[0].name, "dev0");
	ck_assert_uint_eq(devs[0].index, 0);
	ck_assert_uint_eq(devs[0].ipv4, ip(ADDR_A));
	/* No interface holds the address: the default netdev MTU and the IB MTU it carries. */
	ck_assert_uint_eq(devs[0].netdev_mtu, ROCEMU_DEFAULT_NETDEV_MTU);
	ck_assert_int_eq(devs[0].active_mtu, IBV_MTU_4096);
	ck_assert_int_eq(devs[0].port_state, IBV_PORT_ACTIVE);
}
END_TEST

START_TEST(test_several_devices_and_mtu)
{
	unsigned int count = 0;

	ck_assert_int_eq(rocemu_devices_parse("a.b-c_1=" ADDR_A "/1500,second=" ADDR_B "/320", devs,
					      &count, err, sizeof(err)), 0);
	ck_assert_uint_eq(count, 2);
	ck_assert_str_eq(devs[0].name, "a.b-c_1");
	ck_assert_uint_eq(devs[0].netdev_mtu, 1500);
	/* 1500 bytes carry a 1024-byte IB MTU with the RoCE headers, not 2048. */
	ck_assert_int_eq(devs[0].active_mtu, IBV_MTU_1024);
	ck_assert_str_eq(devs[1].name, "second");
	ck_assert_uint_eq(devs[1].index, 1);
	ck_assert_uint_eq(devs[1].ipv4, ip(ADDR_B));
	ck_assert_uint_eq(devs[1].netdev_mtu, 320);
	ck_assert_int_eq(devs[1].active_mtu, IBV_MTU_256);
}
END_TEST

START_TEST(test_default_when_unset_or_empty)
{
	unsigned int count = 0;

	ck_assert_int_eq(rocemu_devices_parse(NULL, devs, &count, err, sizeof(err)), 0);
	ck_assert_uint_eq(count, 1);
	ck_assert_str_eq(devs[0].name, "rocemu0");
	ck_assert_uint_eq(devs[0].ipv4, ip("127.0.0.1"));
	count = 0;
	ck_assert_int_eq(rocemu_devices_parse("", devs, &count, err, sizeof(err)), 0);
	ck_assert_uint_eq(count, 1);
	ck_assert_str_eq(devs[0].name, "rocemu0");
}
END_TEST

START_TEST(test_empty_entries_skipped)
{
	unsigned int count = 0;

	/* strtok_r's rule: empty fields between commas are no entries. */
	ck_assert_int_eq(rocemu_devices_parse(",x=" ADDR_A ",,", devs, &count, err, sizeof(err)), 0);
	ck_assert_uint_eq(count, 1);
	ck_assert_str_eq(devs[0].name, "x");
	expect_refused(",,,", "no device");
}
END_TEST

START_TEST(test_malformed_entries)
{
	expect_refused("dev0", "expected NAME=IPV4[@MODEL][/MTU][/KEY=VALUE...]");
	expect_refused("=" ADDR_A, "device name \"\"");
	expect_refused("bad name=" ADDR_A, "device name \"bad name\"");
	expect_refused("dev/0=" ADDR_A, "device name");
	expect_refused("dev0=" ADDR_A "x", "is not an IPv4 address");
	expect_refused("dev0=fe80::1", "is not an IPv4 address");
	expect_refused("dev0=" ADDR_A "/", "MTU \"\"");
	expect_refused("dev0=" ADDR_A "/319", "MTU \"319\"");
	expect_refused("dev0=" ADDR_A "/65536", "MTU \"65536\"");
	expect_refused("dev0=" ADDR_A "/1500b", "MTU \"1500b\"");
	expect_refused("dev0=" ADDR_A "/99999999999999999999999", "is not a number");
}
END_TEST

START_TEST(test_name_length)
{
	char name[ROCEMU_DEV_NAME_MAX + 1], spec[ROCEMU_DEV_NAME_MAX + 32];
	unsigned int count = 0;

	/* The longest name leaves room for its NUL in the device's name. */
	memset(name, 'n', ROCEMU_DEV_NAME_MAX - 1);
	name[ROCEMU_DEV_NAME_MAX - 1] = '\0';
	snprintf(spec, sizeof(spec), "%s=" ADDR_A, name);
	ck_assert_int_eq(rocemu_devices_parse(spec, devs, &count, err, sizeof(err)), 0);
	ck_assert_str_eq(devs[0].name, name);
	name[ROCEMU_DEV_NAME_MAX - 1] = 'n';
	name[ROCEMU_DEV_NAME_MAX] = '\0';
	snprintf(spec, sizeof(spec), "%s=" ADDR_A, name);
	expect_refused(spec, "device name");
}
END_TEST

START_TEST(test_duplicates_refused)
{
	expect_refused("a=" ADDR_A ",a=" ADDR_B, "device a is listed twice");
	expect_refused("a=" ADDR_A ",b=" ADDR_A, "devices a and b have the same address " ADDR_A);
}
END_TEST

START_TEST(test_device_limit)
{
	char spec[ROCEMU_MAX_DEVICES * 32 + 64];
	unsigned int count = 0, i;
	size_t at = 0;

	for (i = 0; i < ROCEMU_MAX_DEVICES; i++)
		at += (size_t)snprintf(spec + at, sizeof(spec) - at, "%sd%u=198.51.100.%u",
				       i ? "," : "", i, i + 1);
	ck_assert_int_eq(rocemu_devices_parse(spec, devs, &count, err, sizeof(err)), 0);
	ck_assert_uint_eq(count, ROCEMU_MAX_DEVICES);
	ck_assert_uint_eq(devs[ROCEMU_MAX_DEVICES - 1].index, ROCEMU_MAX_DEVICES - 1);
	snprintf(spec + at, sizeof(spec) - at, ",one_more=198.51.100.200");
	expect_refused(spec, "more than");
}
END_TEST

/* Without mac= the MAC is 02:00 and the address; mac= sets it, and the node GUID follows. */
START_TEST(test_mac)
{
	static const uint8_t derived[6] = { 0x02, 0x00, 198, 51, 100, 7 };
	static const uint8_t given[6] = { 0x0a, 0xbc, 0xde, 0xf0, 0x12, 0x34 };
	static const uint8_t guid[8] = { 0x0a, 0xbc, 0xde, 0xff, 0xfe, 0xf0, 0x12, 0x34 };
	unsigned int count = 0;

	ck_assert_int_eq(rocemu_devices_parse("a=" ADDR_A ",b=" ADDR_B "/1500/mac=0A:bc:de:f0:12:34",
					      devs, &count, err, sizeof(err)), 0);
	ck_assert_uint_eq(count, 2);
	ck_assert_mem_eq(devs[0].mac, derived, 6);
	ck_assert_mem_eq(devs[1].mac, given, 6);
	ck_assert_mem_eq(&devs[1].node_guid, guid, 8);
	ck_assert_uint_eq(devs[1].netdev_mtu, 1500);
	/* An option may follow the address directly: the MTU is then the link's or the default. */
	ck_assert_int_eq(rocemu_devices_parse("a=" ADDR_A "/mac=0a:bc:de:f0:12:34", devs, &count,
					      err, sizeof(err)), 0);
	ck_assert_mem_eq(devs[0].mac, given, 6);
	ck_assert_uint_eq(devs[0].netdev_mtu, ROCEMU_DEFAULT_NETDEV_MTU);
	ck_assert(!devs[0].vxlan.on);
}
END_TEST

START_TEST(test_mac_refused)
{
	expect_refused("a=" ADDR_A "/mac=01:00:5e:00:00:01", "is a multicast address");
	expect_refused("a=" ADDR_A "/mac=ff:ff:ff:ff:ff:ff", "is a multicast address");
	expect_refused("a=" ADDR_A "/mac=00:00:00:00:00:00", "is all zeros");
	expect_refused("a=" ADDR_A "/mac=02:00:00:00:00", "is not xx:xx:xx:xx:xx:xx");
	expect_refused("a=" ADDR_A "/mac=02:00:00:00:00:0g", "is not xx:xx:xx:xx:xx:xx");
	expect_refused("a=" ADDR_A "/mac=02:00:00:00:00:001", "is not xx:xx:xx:xx:xx:xx");
	expect_refused("a=" ADDR_A "/mac=2:0:0:0:0:1:aaaaaa", "is not xx:xx:xx:xx:xx:xx");
	expect_refused("a=" ADDR_A "/mac=", "is not xx:xx:xx:xx:xx:xx");
	expect_refused("a=" ADDR_A "/mac=02:00:00:00:00:01/mac=02:00:00:00:00:02", "mac is given twice");
	/* The daemon's switch tells its ports apart by MAC. */
	expect_refused("a=" ADDR_A "/mac=02:00:00:00:00:01,b=" ADDR_B "/mac=02:00:00:00:00:01",
		       "devices a and b have the same MAC");
	expect_refused("a=" ADDR_A ",b=" ADDR_B "/mac=02:00:c6:33:64:07",
		       "devices a and b have the same MAC");
}
END_TEST

START_TEST(test_vxlan)
{
	unsigned int count = 0;

	ck_assert_int_eq(rocemu_devices_parse("a=" ADDR_A "/vxlan=4242/vxlan_remote=198.18.0.2+198.18.0.3,"
					      "b=" ADDR_B "/vxlan=0", devs, &count, err, sizeof(err)), 0);
	ck_assert_uint_eq(count, 2);
	ck_assert(devs[0].vxlan.on);
	ck_assert_uint_eq(devs[0].vxlan.vni, 4242);
	ck_assert_uint_eq(devs[0].vxlan.num_remotes, 2);
	ck_assert_uint_eq(devs[0].vxlan.remotes[0], ip("198.18.0.2"));
	ck_assert_uint_eq(devs[0].vxlan.remotes[1], ip("198.18.0.3"));
	ck_assert_int_eq(devs[0].vxlan.fd, -1);
	/* VNI 0 is a VNI; no remote yet: it floods nowhere until a VTEP is learned. */
	ck_assert(devs[1].vxlan.on);
	ck_assert_uint_eq(devs[1].vxlan.vni, 0);
	ck_assert_uint_eq(devs[1].vxlan.num_remotes, 0);
	ck_assert_int_eq(rocemu_devices_parse("a=" ADDR_A "/vxlan=16777215", devs, &count, err,
					      sizeof(err)), 0);
	ck_assert_uint_eq(devs[0].vxlan.vni, ROCEMU_VXLAN_VNI_MAX);
}
END_TEST

START_TEST(test_vxlan_refused)
{
	char spec[512];
	size_t at;

	expect_refused("a=" ADDR_A "/vxlan=16777216", "VNI \"16777216\" is not a number");
	expect_refused("a=" ADDR_A "/vxlan=-1", "VNI \"-1\"");
	expect_refused("a=" ADDR_A "/vxlan=", "VNI \"\"");
	expect_refused("a=" ADDR_A "/vxlan=42x", "VNI \"42x\"");
	expect_refused("a=" ADDR_A "/vxlan_remote=198.18.0.2", "vxlan_remote needs vxlan=VNI");
	expect_refused("a=" ADDR_A "/vxlan=1/vxlan_remote=", "names no address");
	expect_refused("a=" ADDR_A "/vxlan=1/vxlan_remote=+", "names no address");
	expect_refused("a=" ADDR_A "/vxlan=1/vxlan_remote=host", "\"host\" is not an IPv4 address");
	expect_refused("a=" ADDR_A "/vxlan=1/vxlan_remote=239.1.1.1", "239.1.1.1 is not another host's");
	expect_refused("a=" ADDR_A "/vxlan=1/vxlan_remote=0.0.0.0", "0.0.0.0 is not another host's");
	expect_refused("a=" ADDR_A "/vxlan=1/vxlan_remote=" ADDR_A, ADDR_A " is not another host's");
	expect_refused("a=" ADDR_A "/vxlan=1/vxlan_remote=198.18.0.2+198.18.0.2", "listed twice");
	at = (size_t)snprintf(spec, sizeof(spec), "a=" ADDR_A "/vxlan=1/vxlan_remote=198.18.0.1");
	for (unsigned int i = 2; i <= ROCEMU_VXLAN_MAX_REMOTES + 1; i++)
		at += (size_t)snprintf(spec + at, sizeof(spec) - at, "+198.18.0.%u", i);
	expect_refused(spec, "more than 8 VXLAN remotes");
	expect_refused("a=" ADDR_A "/vxlan=1/vxlan=2", "vxlan is given twice");
	expect_refused("a=" ADDR_A "/vlan=1", "\"vlan\" is no option");
	expect_refused("a=" ADDR_A "/1500/1500", "\"1500\" is no option");
	expect_refused("a=" ADDR_A "/1500/", "\"\" is no option");
}
END_TEST

/* A refused list leaves the caller's string as it was: the parser works on a copy. */
/* @cx3 makes a ConnectX-3 Pro, @cx5 or nothing a ConnectX-5; the model comes before the MTU. */
START_TEST(test_model)
{
	unsigned int count = 0;

	ck_assert_int_eq(rocemu_devices_parse("a=" ADDR_A "@cx3/4200/mac=02:00:00:00:00:0a,b="
					      ADDR_B "@cx5,c=192.0.2.1",
					      devs, &count, err, sizeof(err)), 0);
	ck_assert_uint_eq(count, 3);
	ck_assert_int_eq(devs[0].model, ROCEMU_MODEL_CX3);
	ck_assert_uint_eq(devs[0].ipv4, ip(ADDR_A));
	ck_assert_uint_eq(devs[0].netdev_mtu, 4200);
	ck_assert_uint_eq(devs[0].mac[5], 0x0a);
	ck_assert_int_eq(devs[1].model, ROCEMU_MODEL_CX5);
	ck_assert_int_eq(devs[2].model, ROCEMU_MODEL_CX5);
	expect_refused("a=" ADDR_A "@cx4", "\"cx4\" is no adapter");
	expect_refused("a=" ADDR_A "@", "\"\" is no adapter");
}
END_TEST

START_TEST(test_spec_untouched)
{
	char spec[] = "a=" ADDR_A "/1500,b";
	unsigned int count = 0;

	ck_assert_int_eq(rocemu_devices_parse(spec, devs, &count, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(spec, "a=" ADDR_A "/1500,b");
}
END_TEST

static Suite *device_config_suite(void)
{
	Suite *s = suite_create("device_config");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_one_device);
	tcase_add_test(tc, test_several_devices_and_mtu);
	tcase_add_test(tc, test_default_when_unset_or_empty);
	tcase_add_test(tc, test_empty_entries_skipped);
	tcase_add_test(tc, test_malformed_entries);
	tcase_add_test(tc, test_name_length);
	tcase_add_test(tc, test_duplicates_refused);
	tcase_add_test(tc, test_device_limit);
	tcase_add_test(tc, test_spec_untouched);
	tcase_add_test(tc, test_mac);
	tcase_add_test(tc, test_mac_refused);
	tcase_add_test(tc, test_vxlan);
	tcase_add_test(tc, test_vxlan_refused);
	tcase_add_test(tc, test_model);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(device_config_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
