/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The VXLAN wire (emulator/vxlan/vxlan_wire.c) of a device on 127.0.89.1
 * with two remote VTEPs, played by UDP sockets of the test on 127.0.89.2
 * and .3 port 4789, on both loop backends: a broadcast floods to both in
 * RFC 7348 datagrams (I flag, the VNI, the frame as it was) from a source
 * port of the flow; a frame that arrives teaches the source MAC's VTEP, so
 * a frame for it goes to that VTEP alone; datagrams that are short, lack
 * the I flag, carry another VNI, a frame too short or too long, a group
 * or the device's own source MAC are dropped and counted, and a storm of
 * random datagrams is only counted; a second device cannot take 4789 of
 * the same address, and says why.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emulator/core/emu.h"
#include "emulator/ctrl/emu_life.h"
#include "emulator/vxlan/vxlan_fdb.h"
#include "emulator/vxlan/vxlan_wire.h"
#include "net/eth/eth_frame.h"
#include "net/vxlan/vxlan_hdr.h"

#define DEV_IP "127.0.89.1"
#define PEER_IP_A "127.0.89.2"
#define PEER_IP_B "127.0.89.3"
#define VNI 4242u
#define GUARD_NS (10ull * 1000000000ull)	/* a bound if a datagram never comes, never a measure */

static const enum rocemu_loop_backend backends[] = { ROCEMU_LOOP_EPOLL, ROCEMU_LOOP_URING };

static struct rocemu_emu emu;
static struct rocemu_loop *loop;
static struct rocemu_device *dev;
static int peer_a, peer_b;

static int udp_bound(const char *ip, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = inet_addr(ip) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_msg(!bind(fd, (struct sockaddr *)&sa, sizeof(sa)), "bind %s:%u: %s", ip, port,
		      strerror(errno));
	return fd;
}

static void setup_backend(int i)
{
	struct rocemu_device d;
	char err[256] = "";

	loop = rocemu_loop_new(backends[i]);
	if (!loop && backends[i] == ROCEMU_LOOP_URING)
		return;		/* no io_uring here: that backend's run is skipped */
	ck_assert_ptr_nonnull(loop);
	rocemu_device_init(&d, 0, "rocemu0", inet_addr(DEV_IP), 1500);
	d.vxlan.on = true;
	d.vxlan.vni = VNI;
	d.vxlan.remotes[0] = inet_addr(PEER_IP_A);
	d.vxlan.remotes[1] = inet_addr(PEER_IP_B);
	d.vxlan.num_remotes = 2;
	ck_assert_int_eq(rocemu_emu_setup(&emu, loop, &d, 1), 0);
	dev = &emu.devices[0];
	ck_assert_ptr_eq(emu.eth_wire_tx, rocemu_vxlan_wire_tx);
	ck_assert_msg(!rocemu_vxlan_open(dev, err, sizeof(err)), "open: %s", err);
	peer_a = udp_bound(PEER_IP_A, ROCEMU_VXLAN_PORT);
	peer_b = udp_bound(PEER_IP_B, ROCEMU_VXLAN_PORT);
}

static void teardown(void)
{
	if (!loop)
		return;
	rocemu_emu_fini(&emu);
	ck_assert_int_eq(dev->vxlan.fd, -1);
	rocemu_loop_free(loop);
	close(peer_a);
	close(peer_b);
	loop = NULL;
}

/* A frame of len bytes from smac to dmac, its payload a pattern of seed. */
static void frame(uint8_t *f, size_t len, const uint8_t *dmac, const uint8_t *smac, uint8_t seed)
{
	memcpy(f, dmac, ETH_ALEN);
	memcpy(f + ETH_ALEN, smac, ETH_ALEN);
	f[12] = 0x88;
	f[13] = 0xb5;		/* local experimental EtherType */
	for (size_t i = ETH_HLEN; i < len; i++)
		f[i] = (uint8_t)(seed + i);
}

/* The next datagram on fd within the guard, or 0 bytes when none came in wait_ms. */
static size_t peer_recv(int fd, uint8_t *buf, size_t len, struct sockaddr_in *src, int wait_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	socklen_t slen = sizeof(*src);
	ssize_t n;

	if (poll(&p, 1, wait_ms) != 1)
		return 0;
	n = recvfrom(fd, buf, len, 0, (struct sockaddr *)src, &slen);
	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

/* The datagram fd must get: the VXLAN header of VNI, then f[0, len), from the device. */
static void expect_encapsulated(int fd, const uint8_t *f, size_t len)
{
	static const uint8_t hdr[8] = { 0x08, 0, 0, 0, 0x00, 0x10, 0x92, 0 };	/* VNI 4242 */
	struct sockaddr_in src;
	uint8_t buf[2048];
	size_t n = peer_recv(fd, buf, sizeof(buf), &src, (int)(GUARD_NS / 1000000));

	ck_assert_uint_eq(n, sizeof(hdr) + len);
	ck_assert_mem_eq(buf, hdr, sizeof(hdr));
	ck_assert_mem_eq(buf + sizeof(hdr), f, len);
	ck_assert_uint_eq(src.sin_addr.s_addr, inet_addr(DEV_IP));
	ck_assert_uint_eq(ntohs(src.sin_port),
			  ROCEMU_VXLAN_SPORT_MIN + rocemu_vxlan_sport_index(f, len, ROCEMU_VXLAN_SPORTS));
}

static void expect_nothing(int fd)
{
	struct sockaddr_in src;
	uint8_t buf[2048];

	rocemu_loop_flush(loop);
	ck_assert_uint_eq(peer_recv(fd, buf, sizeof(buf), &src, 100), 0);
}

static uint64_t rx_handled(void)
{
	const struct rocemu_vxlan_counters *c = &dev->vxlan.counters;

	return c->rx_frames + c->rx_malformed + c->rx_other_vni + c->rx_looped;
}

static uint64_t want_handled, guard_deadline;

/* Every millisecond: stop once the device handled what was sent, or at the guard. */
static void check_handled(void *arg)
{
	(void)arg;
	if (rx_handled() >= want_handled || rocemu_now_ns() > guard_deadline)
		rocemu_loop_stop(loop);
	else
		ck_assert_uint_ne(rocemu_loop_timer_add(loop, rocemu_now_ns() + 1000000,
							check_handled, NULL), 0);
}

/* Send data[0, len) from fd to the device's 4789 and run the loop until it is handled. */
static void peer_send(int fd, const void *data, size_t len)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(ROCEMU_VXLAN_PORT),
				   .sin_addr.s_addr = inet_addr(DEV_IP) };

	ck_assert_int_eq(sendto(fd, data, len, 0, (struct sockaddr *)&dst, sizeof(dst)),
			 (ssize_t)len);
	want_handled = rx_handled() + 1;
	guard_deadline = rocemu_now_ns() + GUARD_NS;
	ck_assert_uint_ne(rocemu_loop_timer_add(loop, rocemu_now_ns(), check_handled, NULL), 0);
	ck_assert_int_eq(rocemu_loop_run(loop), 0);
	ck_assert_uint_eq(rx_handled(), want_handled);
}

/* A VXLAN datagram of vni carrying f[0, len) into buf; its length. */
static size_t encapsulate(uint8_t *buf, uint32_t vni, const uint8_t *f, size_t len)
{
	rocemu_vxlan_hdr_build((struct rocemu_vxlan_hdr *)buf, vni);
	memcpy(buf + ROCEMU_VXLAN_HLEN, f, len);
	return ROCEMU_VXLAN_HLEN + len;
}

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t host_x[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
static const uint8_t host_y[6] = { 0x02, 0x66, 0x77, 0x88, 0x99, 0xaa };

START_TEST(test_flood_learn_unicast)
{
	uint8_t f[200], d[300];

	setup_backend(_i);
	if (!loop)
		return;
	/* Broadcast: to every remote. */
	frame(f, sizeof(f), bcast, dev->mac, 1);
	emu.eth_wire_tx(dev, f, sizeof(f));
	rocemu_loop_flush(loop);
	expect_encapsulated(peer_a, f, sizeof(f));
	expect_encapsulated(peer_b, f, sizeof(f));
	ck_assert_uint_eq(dev->vxlan.counters.tx_frames, 2);
	/* Unknown unicast floods too. */
	frame(f, 60, host_x, dev->mac, 2);
	emu.eth_wire_tx(dev, f, 60);
	rocemu_loop_flush(loop);
	expect_encapsulated(peer_a, f, 60);
	expect_encapsulated(peer_b, f, 60);
	/* host_x speaks from B's VTEP: learned there. */
	frame(f, 64, dev->mac, host_x, 3);
	peer_send(peer_b, d, encapsulate(d, VNI, f, 64));
	ck_assert_uint_eq(dev->vxlan.counters.rx_frames, 1);
	ck_assert_uint_eq(rocemu_vxlan_fdb_lookup(&dev->vxlan, host_x, rocemu_now_ns()),
			  inet_addr(PEER_IP_B));
	/* Now a frame for host_x goes to B alone. */
	frame(f, 100, host_x, dev->mac, 4);
	emu.eth_wire_tx(dev, f, 100);
	rocemu_loop_flush(loop);
	expect_encapsulated(peer_b, f, 100);
	expect_nothing(peer_a);
	/* A frame too short for Ethernet never leaves. */
	emu.eth_wire_tx(dev, f, ETH_HLEN - 1);
	ck_assert_uint_eq(dev->vxlan.counters.tx_dropped, 1);
	expect_nothing(peer_a);
	expect_nothing(peer_b);
}
END_TEST

START_TEST(test_bad_datagrams)
{
	const struct rocemu_vxlan_counters *c;
	uint8_t f[1600], d[1700];
	size_t n;

	setup_backend(_i);
	if (!loop)
		return;
	c = &dev->vxlan.counters;
	frame(f, 64, dev->mac, host_y, 5);
	n = encapsulate(d, VNI, f, 64);
	peer_send(peer_a, d, 7);			/* shorter than the header */
	d[0] = 0;					/* no I flag */
	peer_send(peer_a, d, n);
	ck_assert_uint_eq(c->rx_malformed, 2);
	peer_send(peer_a, d, encapsulate(d, VNI + 1, f, 64));
	ck_assert_uint_eq(c->rx_other_vni, 1);
	peer_send(peer_a, d, encapsulate(d, VNI, f, ETH_HLEN - 1));
	/* 1500 + Ethernet + a VLAN tag fit the port; one byte more does not. */
	peer_send(peer_a, d, encapsulate(d, VNI, f, 1500 + ETH_HLEN + 4 + 1));
	ck_assert_uint_eq(c->rx_malformed, 4);
	peer_send(peer_a, d, encapsulate(d, VNI, f, 1500 + ETH_HLEN + 4));
	ck_assert_uint_eq(c->rx_frames, 1);
	frame(f, 64, dev->mac, bcast, 6);
	peer_send(peer_a, d, encapsulate(d, VNI, f, 64));
	ck_assert_uint_eq(c->rx_malformed, 5);
	frame(f, 64, bcast, dev->mac, 7);
	peer_send(peer_a, d, encapsulate(d, VNI, f, 64));
	ck_assert_uint_eq(c->rx_looped, 1);
	/* Only host_y, once, was learned: nothing from a dropped datagram. */
	ck_assert_uint_eq(rocemu_vxlan_fdb_live(&dev->vxlan, rocemu_now_ns()), 1);
	ck_assert_uint_eq(c->rx_frames, 1);
}
END_TEST

START_TEST(test_random_storm)
{
	uint8_t d[512];
	uint64_t before;

	setup_backend(_i);
	if (!loop)
		return;
	srandom(7);
	before = rx_handled();
	for (int i = 0; i < 2000; i++) {
		size_t len = 1 + (size_t)random() % sizeof(d);

		for (size_t b = 0; b < len; b++)
			d[b] = (uint8_t)random();
		peer_send(peer_a, d, len);
	}
	ck_assert_uint_eq(rx_handled() - before, 2000);
	ck_assert_uint_le(rocemu_vxlan_fdb_live(&dev->vxlan, rocemu_now_ns()), ROCEMU_VXLAN_FDB_SIZE);
}
END_TEST

START_TEST(test_port_taken)
{
	struct rocemu_device other;
	char err[256] = "";

	setup_backend(_i);
	if (!loop)
		return;
	rocemu_device_init(&other, 1, "rocemu1", inet_addr(DEV_IP), 1500);
	other.emu = &emu;
	other.vxlan.on = true;
	ck_assert_int_eq(rocemu_vxlan_open(&other, err, sizeof(err)), -EADDRINUSE);
	ck_assert_msg(strstr(err, "rocemu1: VXLAN: " DEV_IP ":4789 is already in use"), "%s", err);
	ck_assert_int_eq(other.vxlan.fd, -1);
	/* A device without a VNI opens nothing. */
	other.vxlan.on = false;
	ck_assert_int_eq(rocemu_vxlan_open(&other, err, sizeof(err)), 0);
	ck_assert_int_eq(other.vxlan.fd, -1);
	rocemu_vxlan_close(&other);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vxlan_wire");
	TCase *tc = tcase_create("wire");
	int n = (int)(sizeof(backends) / sizeof(backends[0]));
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_loop_test(tc, test_flood_learn_unicast, 0, n);
	tcase_add_loop_test(tc, test_bad_datagrams, 0, n);
	tcase_add_loop_test(tc, test_random_storm, 0, n);
	tcase_add_loop_test(tc, test_port_taken, 0, n);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
