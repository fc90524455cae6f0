/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RC source ports (emulator/core/sport.c): the port of a QPN pair follows the
 * Linux RoCE rule (flow label of lqpn * rqpn, folded into 0xC000-0xFFFF),
 * is the same from both ends, and QPs of one port share one socket.
 */
#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "emulator/core/device.h"
#include "emulator/core/sport.h"

/* A device on an address no other test binds. */
#define TEST_ADDR "127.0.252.1"

START_TEST(test_known_value)
{
	/* fl = 0x100 * 0x101 = 0x10100; low 14 bits 0x0100 ^ (fl >> 14 = 0x4) = 0x104. */
	ck_assert_uint_eq(rocemu_sport_of(0x100, 0x101), 0xc104);
}
END_TEST

START_TEST(test_range_and_symmetry)
{
	for (uint32_t a = 1; a < 0x1000000; a = a * 3 + 0x101) {
		for (uint32_t b = 7; b < 0x1000000; b = b * 5 + 0x33) {
			uint16_t p = rocemu_sport_of(a, b);

			ck_assert_uint_ge(p, 0xc000);
			ck_assert_uint_eq(p, rocemu_sport_of(b, a));
		}
	}
}
END_TEST

START_TEST(test_shared_socket)
{
	struct rocemu_device dev;
	uint16_t p1, p2, p3;
	int fd1, fd2, fd3;

	rocemu_device_init(&dev, 0, "rocemu0", inet_addr(TEST_ADDR), 9000);
	fd1 = rocemu_sport_get(&dev, 0x100, 0x101, &p1);
	fd2 = rocemu_sport_get(&dev, 0x101, 0x100, &p2);
	fd3 = rocemu_sport_get(&dev, 0x200, 0x301, &p3);
	ck_assert_int_ge(fd1, 0);
	ck_assert_uint_eq(p1, 0xc104);
	ck_assert_int_eq(fd1, fd2);
	ck_assert_uint_eq(p1, p2);
	ck_assert_uint_ne(p1, p3);
	ck_assert_int_ne(fd1, fd3);
	ck_assert_uint_eq(dev.num_sports, 2);
	rocemu_sport_put(&dev, p1);
	rocemu_sport_put(&dev, p2);
	rocemu_sport_put(&dev, p3);
	/* Kept for reuse: a packet still queued for the port may go out. */
	ck_assert_uint_eq(dev.num_sports, 2);
	ck_assert_int_eq(rocemu_sport_get(&dev, 0x100, 0x101, &p1), fd1);
	rocemu_sport_put(&dev, p1);
	rocemu_sport_close_all(&dev);
	ck_assert_uint_eq(dev.num_sports, 0);
	ck_assert_int_eq(fcntl(fd1, F_GETFD), -1);
}
END_TEST

START_TEST(test_port_taken)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(0xc104),
				  .sin_addr.s_addr = inet_addr(TEST_ADDR) };
	int holder = socket(AF_INET, SOCK_DGRAM, 0);
	struct rocemu_device dev;
	uint16_t port;

	ck_assert_int_ge(holder, 0);
	ck_assert_int_eq(bind(holder, (struct sockaddr *)&sa, sizeof(sa)), 0);
	rocemu_device_init(&dev, 0, "rocemu0", inet_addr(TEST_ADDR), 9000);
	dev.udp_fd = 1000;	/* stands for the device's 4791 socket */
	ck_assert_int_eq(rocemu_sport_get(&dev, 0x100, 0x101, &port), 1000);
	ck_assert_uint_eq(port, 4791);
	ck_assert_uint_eq(dev.num_sports, 0);
	rocemu_sport_put(&dev, port);
	close(holder);
}
END_TEST

static Suite *sport_suite(void)
{
	Suite *s = suite_create("sport");
	TCase *tc = tcase_create("sport");

	tcase_add_test(tc, test_known_value);
	tcase_add_test(tc, test_range_and_symmetry);
	tcase_add_test(tc, test_shared_socket);
	tcase_add_test(tc, test_port_taken);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sport_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
