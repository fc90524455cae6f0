/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The egress fault injector: configuration text, determinism, rates, the
 * corrupted bit, and the mechanics (reorder, hold timeout, duplicate,
 * delay, drop, release on free) on a real loop with two UDP sockets on each
 * backend. Tests wait under a generous bound and never assert durations
 * beyond "not earlier than asked".
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/observe/fault.h"
#include "net/roce/icrc.h"
#include "net/loop/loop.h"
#include "net/roce/roce_hdr.h"
#include "net/udp/udp_port.h"

/*
 * 127.0.251.x and ports away from 4791, so this test runs beside a daemon and
 * other tests; one port per test, as io_uring lets go of a closed socket
 * only some time after the ring is gone.
 */
#define ADDR_A "127.0.251.1"
#define ADDR_B "127.0.251.2"
#define PORT_REORDER 47201
#define PORT_DUP_DELAY 47202
#define PORT_REORDER_DELAY 47203
#define PORT_DROP 47204
#define PORT_FREE 47205
#define PORT_CORRUPT 47206

static struct rocemu_fault_config parsed(const char *text)
{
	struct rocemu_fault_config cfg;
	char err[256] = "";

	ck_assert_msg(rocemu_fault_config_parse(text, &cfg, err, sizeof(err)) == 0,
		      "\"%s\": %s", text, err);
	return cfg;
}

/* ---- configuration text ---- */

START_TEST(test_parse_good)
{
	struct rocemu_fault_config cfg =
		parsed("drop=0.05,dup=0.02,reorder=0.02,corrupt=0.01,delay_us=200,seed=7");

	ck_assert_double_eq(cfg.drop, 0.05);
	ck_assert_double_eq(cfg.dup, 0.02);
	ck_assert_double_eq(cfg.reorder, 0.02);
	ck_assert_double_eq(cfg.corrupt, 0.01);
	ck_assert_uint_eq(cfg.delay_us, 200);
	ck_assert_uint_eq(cfg.seed, 7);
	ck_assert(rocemu_fault_config_active(&cfg));

	cfg = parsed("");
	ck_assert(!rocemu_fault_config_active(&cfg));
	ck_assert_double_eq(cfg.drop + cfg.dup + cfg.reorder + cfg.corrupt, 0);
	ck_assert_uint_eq(cfg.delay_us + cfg.seed, 0);

	cfg = parsed("seed=0x10");
	ck_assert_uint_eq(cfg.seed, 16);
	ck_assert(!rocemu_fault_config_active(&cfg)); /* a seed alone injects nothing */
	ck_assert_uint_eq(parsed("seed=18446744073709551615").seed, UINT64_MAX);
	ck_assert_uint_eq(parsed("seed=010").seed, 10); /* decimal, not octal */
	ck_assert_double_eq(parsed("drop=1").drop, 1);
	ck_assert_double_eq(parsed("corrupt=.5").corrupt, 0.5);
	ck_assert_uint_eq(parsed("delay_us=10000000").delay_us, ROCEMU_FAULT_DELAY_US_MAX);
	cfg = parsed("delay_us=1");
	ck_assert(rocemu_fault_config_active(&cfg));
	/* Rates may add up to exactly 1 despite rounding; keys in any order. */
	cfg = parsed("corrupt=0.1,reorder=0.2,drop=0.7");
	ck_assert_double_eq(cfg.drop, 0.7);
}
END_TEST

static const struct {
	const char *text;
	const char *in_message;
} bad_texts[] = {
	{ "bogus=1", "unknown fault key 'bogus'" },
	{ "Drop=0.1", "unknown fault key 'Drop'" },
	{ "drop", "'drop' is not key=value" },
	{ "drop=0.1,", "'' is not key=value" },
	{ ",drop=0.1", "'' is not key=value" },
	{ "drop=0.1,,dup=0.1", "'' is not key=value" },
	{ "=0.1", "unknown fault key ''" },
	{ "drop=", "bad value '' for fault key 'drop'" },
	{ "drop=1.5", "bad value '1.5' for fault key 'drop'" },
	{ "drop=-0.1", "bad value '-0.1' for fault key 'drop'" },
	{ "drop=+0.1", "bad value '+0.1' for fault key 'drop'" },
	{ "drop= 0.1", "bad value ' 0.1' for fault key 'drop'" },
	{ "drop=nan", "bad value 'nan' for fault key 'drop'" },
	{ "dup=0.1x", "bad value '0.1x' for fault key 'dup'" },
	{ "reorder=inf", "bad value 'inf' for fault key 'reorder'" },
	{ "corrupt=2", "bad value '2' for fault key 'corrupt'" },
	{ "corrupt=1e400", "bad value '1e400' for fault key 'corrupt'" },
	{ "delay_us=-1", "bad value '-1' for fault key 'delay_us'" },
	{ "delay_us=1.5", "bad value '1.5' for fault key 'delay_us'" },
	{ "delay_us=10000001", "bad value '10000001' for fault key 'delay_us'" },
	{ "seed=-1", "bad value '-1' for fault key 'seed'" },
	{ "seed=18446744073709551616", "bad value '18446744073709551616' for fault key 'seed'" },
	{ "seed=0x", "bad value '0x' for fault key 'seed'" },
	{ "seed=7 ", "bad value '7 ' for fault key 'seed'" },
	{ "drop=0.1,drop=0.2", "fault key 'drop' given twice" },
	{ "drop=0.6,dup=0.5", "add up to more than 1" },
};

START_TEST(test_parse_bad)
{
	const struct rocemu_fault_config before = { .drop = 0.25, .delay_us = 9, .seed = 3 };
	struct rocemu_fault_config cfg = before;
	char err[256];

	for (size_t i = 0; i < sizeof(bad_texts) / sizeof(bad_texts[0]); i++) {
		err[0] = '\0';
		ck_assert_msg(rocemu_fault_config_parse(bad_texts[i].text, &cfg, err, sizeof(err)) ==
			      -EINVAL, "\"%s\" was accepted", bad_texts[i].text);
		ck_assert_msg(strstr(err, bad_texts[i].in_message),
			      "\"%s\": message \"%s\" lacks \"%s\"", bad_texts[i].text, err,
			      bad_texts[i].in_message);
		ck_assert_msg(!memcmp(&cfg, &before, sizeof(cfg)), "\"%s\" changed the config",
			      bad_texts[i].text);
	}
	/* No room for a message is fine. */
	ck_assert_int_eq(rocemu_fault_config_parse("x=1", &cfg, NULL, 0), -EINVAL);
	ck_assert_int_eq(rocemu_fault_config_parse(NULL, &cfg, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_format_round_trip)
{
	static const char *const canonical[] = {
		"drop=0.05,dup=0.02,reorder=0.02,corrupt=0.01,delay_us=200,seed=7",
		"",
		"drop=1",
		"reorder=0.5,seed=18446744073709551615",
		"corrupt=1e-07",
		"delay_us=10000000",
		"drop=0.1,dup=0.2,reorder=0.3,corrupt=0.4",
	};
	const struct rocemu_fault_config odd = { .drop = 1.0 / 3, .dup = 0.1 + 0.2, .seed = 1 };
	struct rocemu_fault_config back;
	char buf[ROCEMU_FAULT_TEXT_MAX];

	for (size_t i = 0; i < sizeof(canonical) / sizeof(canonical[0]); i++) {
		struct rocemu_fault_config cfg = parsed(canonical[i]);

		ck_assert_int_eq(rocemu_fault_config_format(&cfg, buf, sizeof(buf)),
				 (int)strlen(canonical[i]));
		ck_assert_str_eq(buf, canonical[i]);
	}
	/* Doubles with no short decimal form still come back exactly. */
	ck_assert_int_gt(rocemu_fault_config_format(&odd, buf, sizeof(buf)), 0);
	back = parsed(buf);
	ck_assert_msg(!memcmp(&back, &odd, sizeof(odd)), "\"%s\" did not round-trip", buf);
	/* Too small a buffer. */
	ck_assert_int_eq(rocemu_fault_config_format(&odd, buf, 10), -ENOSPC);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(rocemu_fault_config_format(NULL, buf, sizeof(buf)), -EINVAL);
}
END_TEST

/* ---- decisions ---- */

static struct rocemu_loop *test_loop;

static struct rocemu_fault *injector(const char *text, uint64_t salt)
{
	struct rocemu_fault_config cfg = parsed(text);
	struct rocemu_fault *f = rocemu_fault_new(test_loop, &cfg, salt);

	ck_assert_ptr_nonnull(f);
	ck_assert(!memcmp(rocemu_fault_config(f), &cfg, sizeof(cfg)));
	return f;
}

static void decisions_setup(void)
{
	test_loop = rocemu_loop_new(ROCEMU_LOOP_EPOLL);
	ck_assert_ptr_nonnull(test_loop);
}

static void decisions_teardown(void)
{
	rocemu_loop_free(test_loop);
}

#define MIXED "drop=0.1,dup=0.05,reorder=0.05,corrupt=0.1,seed=7"
#define NSEQ 10000

/* Decisions for lengths 1..200 cycled, packed as action << 32 | bit. */
static void draw(struct rocemu_fault *f, uint64_t *seq)
{
	struct rocemu_fault_decision d;

	for (int i = 0; i < NSEQ; i++) {
		rocemu_fault_decide(f, (size_t)(i % 200) + 1, &d);
		seq[i] = (uint64_t)d.action << 32 | (d.action == ROCEMU_FAULT_CORRUPT ? d.corrupt_bit : 0);
	}
}

START_TEST(test_same_seed_same_sequence)
{
	static uint64_t a[NSEQ], b[NSEQ], c[NSEQ], d[NSEQ];
	struct rocemu_fault *fa = injector(MIXED, 0x0a000001), *fb = injector(MIXED, 0x0a000001);
	struct rocemu_fault *fc = injector("drop=0.1,dup=0.05,reorder=0.05,corrupt=0.1,seed=8",
					   0x0a000001);
	struct rocemu_fault *fd = injector(MIXED, 0x0a000002);

	draw(fa, a);
	draw(fb, b);
	draw(fc, c);
	draw(fd, d);
	ck_assert(!memcmp(a, b, sizeof(a)));
	ck_assert(memcmp(a, c, sizeof(a)));	/* another seed */
	ck_assert(memcmp(a, d, sizeof(a)));	/* another device */
	/* The actions alone depend on nothing but seed and salt, not on lengths. */
	rocemu_fault_free(fb);
	fb = injector(MIXED, 0x0a000001);
	for (int i = 0; i < NSEQ; i++) {
		struct rocemu_fault_decision dec;

		ck_assert_uint_eq(rocemu_fault_decide(fb, 1000, &dec), a[i] >> 32);
	}
	rocemu_fault_free(fa);
	rocemu_fault_free(fb);
	rocemu_fault_free(fc);
	rocemu_fault_free(fd);
}
END_TEST

START_TEST(test_rates_over_100k)
{
	static const struct { const char *text; double rate[5]; } cases[] = {
		/* PASS, DROP, DUPLICATE, REORDER, CORRUPT */
		{ MIXED, { 0.7, 0.1, 0.05, 0.05, 0.1 } },
		{ "drop=0.1", { 0.9, 0.1, 0, 0, 0 } },
		{ "drop=1", { 0, 1, 0, 0, 0 } },
		{ "corrupt=1", { 0, 0, 0, 0, 1 } },
		{ "delay_us=5", { 1, 0, 0, 0, 0 } },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct rocemu_fault *f = injector(cases[c].text, 1);
		const uint64_t delay_ns = rocemu_fault_config(f)->delay_us * 1000ull;
		unsigned int count[5] = { 0 }, wrong_delay = 0;
		struct rocemu_fault_decision d;

		/* One assertion after the loop: each ck_assert is a message to the runner. */
		for (int i = 0; i < 100000; i++) {
			rocemu_fault_decide(f, 64, &d);
			count[d.action]++;
			wrong_delay += d.delay_ns != (d.action == ROCEMU_FAULT_DROP ? 0 : delay_ns);
		}
		ck_assert_uint_eq(wrong_delay, 0);
		for (int a = 0; a < 5; a++) {
			double got = count[a] / 100000.0, want = cases[c].rate[a];

			/* +-20% of the rate: more than 10 standard deviations at these sizes. */
			ck_assert_msg(got >= want * 0.8 && got <= want * 1.2,
				      "%s: action %d at %.4f, expected %.4f", cases[c].text, a, got,
				      want);
		}
		rocemu_fault_free(f);
	}
}
END_TEST

/* Corruption picks a bit past the BTH, covering that whole range uniformly enough to hit every bit. */
START_TEST(test_corrupt_bit_range)
{
	struct rocemu_fault *f = injector("corrupt=1,seed=99", 5);
	struct rocemu_fault_decision d;
	uint8_t hit[16] = { 0 };

	for (size_t len = 1; len <= 200; len++) {
		for (int i = 0; i < 50; i++) {
			size_t first = len > ROCEMU_BTH_BYTES ? ROCEMU_BTH_BYTES * 8 : 0;

			ck_assert_uint_eq(rocemu_fault_decide(f, len, &d), ROCEMU_FAULT_CORRUPT);
			ck_assert_uint_ge(d.corrupt_bit, first);
			ck_assert_uint_lt(d.corrupt_bit, len * 8);
		}
	}
	/* 16 bytes: the 32 bits of bytes 12..15, each hit in 3200 draws. */
	for (int i = 0; i < 3200; i++) {
		rocemu_fault_decide(f, 16, &d);
		hit[d.corrupt_bit / 8] |= (uint8_t)(1u << d.corrupt_bit % 8);
	}
	for (int byte = 0; byte < 16; byte++)
		ck_assert_uint_eq(hit[byte], byte < ROCEMU_BTH_BYTES ? 0 : 0xff);
	/* Nothing to corrupt in an empty datagram. */
	ck_assert_uint_eq(rocemu_fault_decide(f, 0, &d), ROCEMU_FAULT_PASS);
	rocemu_fault_free(f);
}
END_TEST

/* ---- mechanics on a real loop ---- */

static const struct {
	enum rocemu_loop_backend backend;
	const char *name;
} backends[] = {
	{ ROCEMU_LOOP_EPOLL, "epoll" },
	{ ROCEMU_LOOP_URING, "io_uring" },
};

#define GUARD_NS (10ull * 1000000000ull)
#define MAX_RX 16

struct link {
	struct rocemu_loop *loop;
	int fd[2];			/* A sends, B receives */
	struct sockaddr_in addr[2];
	int want;			/* stop after this many datagrams */
	int got;
	uint8_t rx[MAX_RX][128];
	size_t rx_len[MAX_RX];
	uint64_t rx_ns[MAX_RX];
	int guard_expired;
};

static void b_received(void *arg, int fd, const struct rocemu_dgram *d)
{
	struct link *l = arg;

	ck_assert_int_eq(fd, l->fd[1]);
	ck_assert_int_lt(l->got, MAX_RX);
	ck_assert_uint_le(d->len, sizeof(l->rx[0]));
	ck_assert_uint_eq(d->src.sin_addr.s_addr, l->addr[0].sin_addr.s_addr);
	memcpy(l->rx[l->got], d->data, d->len);
	l->rx_len[l->got] = d->len;
	l->rx_ns[l->got] = rocemu_now_ns();
	if (++l->got == l->want)
		rocemu_loop_stop(l->loop);
}

static void guard_fire(void *arg)
{
	struct link *l = arg;

	l->guard_expired = 1;
	rocemu_loop_stop(l->loop);
}

static int udp_open(const char *ip, uint16_t port, struct sockaddr_in *sa)
{
	char err[256] = "";
	int fd = rocemu_udp_port_open(inet_addr(ip), port, err, sizeof(err));

	ck_assert_msg(fd >= 0, "open %s:%u: %s", ip, port, err);
	*sa = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port),
				    .sin_addr.s_addr = inet_addr(ip) };
	return fd;
}

static void link_open(struct link *l, int backend, uint16_t port)
{
	*l = (struct link){ .loop = rocemu_loop_new(backends[backend].backend) };
	ck_assert_msg(l->loop, "%s loop: %s", backends[backend].name, strerror(errno));
	l->fd[0] = udp_open(ADDR_A, port, &l->addr[0]);
	l->fd[1] = udp_open(ADDR_B, port, &l->addr[1]);
	ck_assert_int_eq(rocemu_loop_add_udp(l->loop, l->fd[1], b_received, l), 0);
}

static void link_close(struct link *l)
{
	rocemu_loop_free(l->loop);
	close(l->fd[0]);
	close(l->fd[1]);
}

/* Run until `want` datagrams arrived in all (a bound, never a measure). */
static void run_until(struct link *l, int want)
{
	uint64_t guard = rocemu_loop_timer_add(l->loop, rocemu_now_ns() + GUARD_NS, guard_fire, l);

	l->want = want;
	ck_assert_int_eq(rocemu_loop_run(l->loop), 0);
	ck_assert_msg(!l->guard_expired, "only %d of %d datagrams came within 10 s", l->got, want);
	rocemu_loop_timer_cancel(l->loop, guard);
}

static int send_tag(struct link *l, struct rocemu_fault *f, uint8_t tag)
{
	uint8_t msg[16];

	memset(msg, tag, sizeof(msg));
	return rocemu_fault_apply(f, l->fd[0], &l->addr[1], msg, sizeof(msg), rocemu_now_ns());
}

START_TEST(test_reorder_releases_held)
{
	struct link l;
	struct rocemu_fault *f;
	/* reorder=1: odd ones are held and follow the next; a REORDER while holding is a PASS. */
	static const uint8_t expected[] = { 2, 1, 4, 3, 6, 5, 7 };

	link_open(&l, _i, PORT_REORDER);
	f = rocemu_fault_new(l.loop, &(struct rocemu_fault_config){ .reorder = 1 }, 0);
	ck_assert_ptr_nonnull(f);
	for (uint8_t tag = 1; tag <= 6; tag++)
		ck_assert_int_eq(send_tag(&l, f, tag),
				 tag & 1 ? ROCEMU_FAULT_REORDER : ROCEMU_FAULT_PASS);
	/* 7 has no successor: the hold timeout sends it. */
	ck_assert_int_eq(send_tag(&l, f, 7), ROCEMU_FAULT_REORDER);
	run_until(&l, 7);
	for (int i = 0; i < 7; i++) {
		ck_assert_uint_eq(l.rx_len[i], 16);
		ck_assert_uint_eq(l.rx[i][0], expected[i]);
	}
	ck_assert_uint_eq(rocemu_fault_counters(f)->reordered, 3);
	ck_assert_uint_eq(rocemu_fault_counters(f)->dropped, 0);
	rocemu_fault_free(f);
	link_close(&l);
}
END_TEST

START_TEST(test_duplicate_and_delay)
{
	struct rocemu_fault_config cfg = { .dup = 1, .delay_us = 2000 };
	struct link l;
	struct rocemu_fault *f;
	uint64_t sent;

	link_open(&l, _i, PORT_DUP_DELAY);
	f = rocemu_fault_new(l.loop, &cfg, 0);
	ck_assert_ptr_nonnull(f);
	sent = rocemu_now_ns();
	ck_assert_int_eq(send_tag(&l, f, 1), ROCEMU_FAULT_DUPLICATE);
	ck_assert_int_eq(send_tag(&l, f, 2), ROCEMU_FAULT_DUPLICATE);
	run_until(&l, 4);
	for (int i = 0; i < 4; i++) {
		ck_assert_uint_eq(l.rx[i][0], 1 + i / 2);
		ck_assert_uint_ge(l.rx_ns[i] - sent, 2000 * 1000ull); /* never early */
	}
	ck_assert_uint_eq(rocemu_fault_counters(f)->duplicated, 2);
	ck_assert_uint_eq(rocemu_fault_counters(f)->delayed, 2);
	rocemu_fault_free(f);
	link_close(&l);
}
END_TEST

/* A reordered datagram under delay still follows its successor, and both wait the delay. */
START_TEST(test_reorder_with_delay)
{
	struct rocemu_fault_config cfg = { .reorder = 1, .delay_us = 3000 };
	struct link l;
	struct rocemu_fault *f;

	link_open(&l, _i, PORT_REORDER_DELAY);
	f = rocemu_fault_new(l.loop, &cfg, 0);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(send_tag(&l, f, 1), ROCEMU_FAULT_REORDER);
	ck_assert_int_eq(send_tag(&l, f, 2), ROCEMU_FAULT_PASS);
	ck_assert_int_eq(send_tag(&l, f, 3), ROCEMU_FAULT_REORDER);
	run_until(&l, 3);
	ck_assert_uint_eq(l.rx[0][0], 2);
	ck_assert_uint_eq(l.rx[1][0], 1);
	ck_assert_uint_eq(l.rx[2][0], 3);
	ck_assert_uint_eq(rocemu_fault_counters(f)->reordered, 1);
	ck_assert_uint_eq(rocemu_fault_counters(f)->delayed, 3);
	rocemu_fault_free(f);
	link_close(&l);
}
END_TEST

START_TEST(test_drop_and_inactive)
{
	struct link l;
	struct rocemu_fault *drop, *none;
	static uint8_t big[65508];

	link_open(&l, _i, PORT_DROP);
	drop = rocemu_fault_new(l.loop, &(struct rocemu_fault_config){ .drop = 1 }, 0);
	none = rocemu_fault_new(l.loop, &(struct rocemu_fault_config){ .seed = 5 }, 0);
	ck_assert_ptr_nonnull(drop);
	ck_assert_ptr_nonnull(none);
	ck_assert_int_eq(send_tag(&l, drop, 1), ROCEMU_FAULT_DROP);
	ck_assert_int_eq(send_tag(&l, drop, 2), ROCEMU_FAULT_DROP);
	ck_assert_int_eq(send_tag(&l, none, 3), ROCEMU_FAULT_PASS);
	run_until(&l, 1);
	ck_assert_uint_eq(l.rx[0][0], 3);	/* the dropped ones never came first */
	ck_assert_uint_eq(rocemu_fault_counters(drop)->dropped, 2);
	ck_assert_uint_eq(rocemu_fault_counters(none)->dropped, 0);
	/* Bad arguments: nothing drawn, nothing counted. */
	ck_assert_int_eq(rocemu_fault_apply(drop, -1, &l.addr[1], big, 1, 0), -EINVAL);
	ck_assert_int_eq(rocemu_fault_apply(drop, l.fd[0], NULL, big, 1, 0), -EINVAL);
	ck_assert_int_eq(rocemu_fault_apply(drop, l.fd[0], &l.addr[1], big, sizeof(big), 0),
			 -EMSGSIZE);
	ck_assert_uint_eq(rocemu_fault_counters(drop)->dropped, 2);
	rocemu_fault_free(drop);
	rocemu_fault_free(none);
	link_close(&l);
}
END_TEST

/* Freeing the injector sends what it held (switching faults off loses nothing). */
START_TEST(test_free_releases_held)
{
	struct rocemu_fault_config cfg = { .reorder = 1, .delay_us = 1000000 };
	struct link l;
	struct rocemu_fault *f;

	link_open(&l, _i, PORT_FREE);
	f = rocemu_fault_new(l.loop, &cfg, 0);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(send_tag(&l, f, 1), ROCEMU_FAULT_REORDER);
	ck_assert_int_eq(send_tag(&l, f, 2), ROCEMU_FAULT_PASS);	/* queued for 1 s */
	ck_assert_int_eq(send_tag(&l, f, 3), ROCEMU_FAULT_REORDER);	/* held */
	rocemu_fault_free(f);
	run_until(&l, 3);
	ck_assert_uint_eq(l.rx[0][0], 2);
	ck_assert_uint_eq(l.rx[1][0], 1);
	ck_assert_uint_eq(l.rx[2][0], 3);
	link_close(&l);
}
END_TEST

/* A corrupted RoCE packet differs in exactly one bit past the BTH and fails the ICRC check. */
START_TEST(test_corrupt_fails_icrc)
{
	struct rocemu_fault_config cfg = { .corrupt = 1, .seed = 11 };
	struct rocemu_ipv4_udp flow = { .saddr = inet_addr(ADDR_A), .daddr = inet_addr(ADDR_B),
					.sport = htons(PORT_CORRUPT), .dport = htons(PORT_CORRUPT) };
	uint8_t pkt[ROCEMU_BTH_BYTES + 64 + ROCEMU_ICRC_BYTES] = { 0 };
	struct link l;
	struct rocemu_fault *f;
	size_t len;

	rocemu_bth_set_opcode(pkt, ROCEMU_OP_RC_SEND_ONLY);
	rocemu_bth_set_pkey(pkt, 0xffff);
	rocemu_bth_set_destqp(pkt, 0x112);
	for (int i = 0; i < 64; i++)
		pkt[ROCEMU_BTH_BYTES + i] = (uint8_t)i;
	len = rocemu_icrc_append_v4(&flow, pkt, ROCEMU_BTH_BYTES + 64, 0);
	ck_assert_int_eq(rocemu_icrc_check_v4(&flow, pkt, len, NULL), 0);

	link_open(&l, _i, PORT_CORRUPT);
	f = rocemu_fault_new(l.loop, &cfg, 0);
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(rocemu_fault_apply(f, l.fd[0], &l.addr[1], pkt, len, rocemu_now_ns()),
				 ROCEMU_FAULT_CORRUPT);
	run_until(&l, 8);
	for (int i = 0; i < 8; i++) {
		int flipped = 0;

		ck_assert_uint_eq(l.rx_len[i], len);
		for (size_t b = 0; b < len; b++) {
			uint8_t x = l.rx[i][b] ^ pkt[b];

			if (x)
				ck_assert_uint_ge(b, ROCEMU_BTH_BYTES);
			flipped += __builtin_popcount(x);
		}
		ck_assert_int_eq(flipped, 1);
		ck_assert_int_eq(rocemu_icrc_check_v4(&flow, l.rx[i], len, NULL), -EBADMSG);
	}
	ck_assert_uint_eq(rocemu_fault_counters(f)->corrupted, 8);
	rocemu_fault_free(f);
	link_close(&l);
}
END_TEST

static int uring_usable(void)
{
	struct rocemu_loop *loop = rocemu_loop_new(ROCEMU_LOOP_URING);

	if (!loop) {
		printf("io_uring cannot be set up here (%s): skipping the io_uring cases\n",
		       strerror(errno));
		return 0;
	}
	rocemu_loop_free(loop);
	return 1;
}

static Suite *fault_suite(void)
{
	Suite *s = suite_create("fault");
	int nbackends = uring_usable() ? 2 : 1;
	TCase *tc;

	tc = tcase_create("config");
	tcase_add_test(tc, test_parse_good);
	tcase_add_test(tc, test_parse_bad);
	tcase_add_test(tc, test_format_round_trip);
	suite_add_tcase(s, tc);

	tc = tcase_create("decisions");
	tcase_add_checked_fixture(tc, decisions_setup, decisions_teardown);
	tcase_add_test(tc, test_same_seed_same_sequence);
	tcase_add_test(tc, test_rates_over_100k);
	tcase_add_test(tc, test_corrupt_bit_range);
	suite_add_tcase(s, tc);

	for (int b = 0; b < nbackends; b++) {
		/* A loop test from b to b + 1: _i is the backend. */
		tc = tcase_create(backends[b].name);
		tcase_set_timeout(tc, 60);
		tcase_add_loop_test(tc, test_reorder_releases_held, b, b + 1);
		tcase_add_loop_test(tc, test_duplicate_and_delay, b, b + 1);
		tcase_add_loop_test(tc, test_reorder_with_delay, b, b + 1);
		tcase_add_loop_test(tc, test_drop_and_inactive, b, b + 1);
		tcase_add_loop_test(tc, test_free_releases_held, b, b + 1);
		tcase_add_loop_test(tc, test_corrupt_fails_icrc, b, b + 1);
		suite_add_tcase(s, tc);
	}
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(fault_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
