/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The event loop on both backends (every loop test runs once per backend;
 * where io_uring cannot be set up its cases do not run and the program
 * exits 77, a skip, once the others passed), and the UDP port opener. Tests wait for events under a generous
 * bound and never assert durations.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/loop/loop.h"
#include "net/udp/udp_port.h"

/* 127.0.250.x and ports away from 4791, so this test runs beside a daemon and other tests. */
#define ADDR_A "127.0.250.1"
#define ADDR_B "127.0.250.2"
#define PORT_EXCHANGE 47101
#define PORT_GSO 47102
#define PORT_IN_USE 47103
#define PORT_LOCAL 47104
#define PORT_LOCAL_GSO 47105

static const struct {
	enum rocemu_loop_backend backend;
	const char *name;
} backends[] = {
	{ ROCEMU_LOOP_EPOLL, "epoll" },
	{ ROCEMU_LOOP_URING, "io_uring" },
};

static struct rocemu_loop *loop_new(int backend)
{
	struct rocemu_loop *loop = rocemu_loop_new(backends[backend].backend);

	ck_assert_msg(loop, "%s loop: %s", backends[backend].name, strerror(errno));
	ck_assert_str_eq(rocemu_loop_backend_name(loop), backends[backend].name);
	return loop;
}

/* ---- waiting: a bound that stops the loop if events never come, never a measure ---- */

#define GUARD_NS (10ull * 1000000000ull)

static int guard_expired;

static void guard_fire(void *arg)
{
	guard_expired = 1;
	rocemu_loop_stop(arg);
}

static void run_until_stopped(struct rocemu_loop *loop)
{
	uint64_t guard = rocemu_loop_timer_add(loop, rocemu_now_ns() + GUARD_NS, guard_fire, loop);

	ck_assert_uint_ne(guard, 0);
	guard_expired = 0;
	ck_assert_int_eq(rocemu_loop_run(loop), 0);
	ck_assert_msg(!guard_expired, "the expected events did not come within 10 s");
	rocemu_loop_timer_cancel(loop, guard);
}

/* ---- timers ---- */

struct timer_ctx {
	struct rocemu_loop *loop;
	uint64_t base;
	int fired[16];
	int nfired;
};

struct timer_arg {
	struct timer_ctx *ctx;
	int tag;
};

static struct timer_arg late_arg;

static void timer_note(void *arg)
{
	struct timer_arg *t = arg;
	struct timer_ctx *ctx = t->ctx;

	ck_assert_int_lt(ctx->nfired, 16);
	ctx->fired[ctx->nfired++] = t->tag;
	/* Tag 1 adds tag 7 from inside a callback, due before tag 2. */
	if (t->tag == 1) {
		late_arg = (struct timer_arg){ ctx, 7 };
		ck_assert_uint_ne(rocemu_loop_timer_add(ctx->loop, ctx->base + 10000001, timer_note,
							&late_arg), 0);
	}
	if (t->tag == 5)
		rocemu_loop_stop(ctx->loop);
}

START_TEST(test_timers_fire_in_deadline_order)
{
	/* tag, deadline in ms after base; tag 3 is cancelled, tag 6 ties with tag 2. */
	static const struct { int tag; int ms; } plan[] = {
		{ 0, 30 }, { 1, 10 }, { 2, 20 }, { 3, 15 }, { 4, 25 }, { 5, 40 }, { 6, 20 },
	};
	static const int expected[] = { 1, 7, 2, 6, 0, 5 };
	struct timer_ctx ctx = { .loop = loop_new(_i), .base = rocemu_now_ns() };
	struct timer_arg args[7];
	uint64_t ids[7];

	for (int i = 0; i < 7; i++) {
		args[i] = (struct timer_arg){ &ctx, plan[i].tag };
		ids[i] = rocemu_loop_timer_add(ctx.loop, ctx.base + plan[i].ms * 1000000ull,
					       timer_note, &args[i]);
		ck_assert_uint_ne(ids[i], 0);
		for (int j = 0; j < i; j++)
			ck_assert_uint_ne(ids[i], ids[j]);
	}
	rocemu_loop_timer_cancel(ctx.loop, ids[3]);
	rocemu_loop_timer_cancel(ctx.loop, ids[4]);
	rocemu_loop_timer_cancel(ctx.loop, ids[4]); /* twice: a no-op */
	run_until_stopped(ctx.loop);
	ck_assert_int_eq(ctx.nfired, 6);
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(ctx.fired[i], expected[i]);
	/* Cancelling timers that already ran, or id 0, changes nothing. */
	rocemu_loop_timer_cancel(ctx.loop, ids[1]);
	rocemu_loop_timer_cancel(ctx.loop, 0);
	ck_assert_uint_eq(rocemu_loop_timer_add(ctx.loop, 0, NULL, NULL), 0);
	ck_assert_int_eq(errno, EINVAL);
	rocemu_loop_free(ctx.loop);
}
END_TEST

/* An embedded timer that arms itself again from its callback until it has run twice. */
struct embedded_ctx {
	struct rocemu_loop *loop;
	struct rocemu_loop_timer timer;
	int runs;
	bool armed_in_callback;
};

static void embedded_fire(void *arg)
{
	struct embedded_ctx *ctx = arg;

	/* Disarmed before its callback, so it can be armed again from there. */
	ck_assert(!rocemu_loop_timer_armed(&ctx->timer));
	if (++ctx->runs == 2) {
		rocemu_loop_stop(ctx->loop);
		return;
	}
	ck_assert_int_eq(rocemu_loop_timer_arm(ctx->loop, &ctx->timer, rocemu_now_ns()), 0);
	ctx->armed_in_callback = rocemu_loop_timer_armed(&ctx->timer);
}

START_TEST(test_embedded_timer_arms_once)
{
	struct embedded_ctx ctx = { .loop = loop_new(_i) };
	uint64_t now = rocemu_now_ns();

	rocemu_loop_timer_init(&ctx.timer, embedded_fire, &ctx);
	ck_assert(!rocemu_loop_timer_armed(&ctx.timer));
	/* Disarmed, it never runs; a disarm of a disarmed timer is a no-op. */
	ck_assert_int_eq(rocemu_loop_timer_arm(ctx.loop, &ctx.timer, now), 0);
	rocemu_loop_timer_disarm(ctx.loop, &ctx.timer);
	rocemu_loop_timer_disarm(ctx.loop, &ctx.timer);
	ck_assert(!rocemu_loop_timer_armed(&ctx.timer));
	/* Armed twice, it runs once (then once more because its callback armed it). */
	ck_assert_int_eq(rocemu_loop_timer_arm(ctx.loop, &ctx.timer, now), 0);
	ck_assert_int_eq(rocemu_loop_timer_arm(ctx.loop, &ctx.timer, now + 1000000000ull), 0);
	ck_assert(rocemu_loop_timer_armed(&ctx.timer));
	run_until_stopped(ctx.loop);
	ck_assert_int_eq(ctx.runs, 2);
	ck_assert(ctx.armed_in_callback);
	ck_assert(!rocemu_loop_timer_armed(&ctx.timer));
	rocemu_loop_free(ctx.loop);
}
END_TEST

/* ---- watched fds ---- */

struct pipe_ctx {
	struct rocemu_loop *loop;
	int a[2], b[2];
	int a_calls, b_calls;
};

static void pipe_a_ready(void *arg, int fd, uint32_t revents)
{
	struct pipe_ctx *ctx = arg;
	char c;

	ck_assert(revents & POLLIN);
	ck_assert_int_eq(fd, ctx->a[0]);
	ctx->a_calls++;
	ck_assert_int_eq(read(fd, &c, 1), 1);
	ck_assert_int_eq(rocemu_loop_unwatch_fd(ctx->loop, fd), 0);
	ck_assert_int_eq(rocemu_loop_unwatch_fd(ctx->loop, fd), -ENOENT);
	/* More data on a (no longer watched) and b: only b may report. */
	ck_assert_int_eq(write(ctx->a[1], "x", 1), 1);
	ck_assert_int_eq(write(ctx->b[1], "y", 1), 1);
}

static void pipe_b_ready(void *arg, int fd, uint32_t revents)
{
	struct pipe_ctx *ctx = arg;
	char c;

	ctx->b_calls++;
	ck_assert_int_eq(read(fd, &c, 1), 1);
	rocemu_loop_stop(ctx->loop);
}

START_TEST(test_watch_fd_and_unwatch_in_callback)
{
	struct pipe_ctx ctx = { .loop = loop_new(_i) };

	ck_assert_int_eq(pipe(ctx.a), 0);
	ck_assert_int_eq(pipe(ctx.b), 0);
	ck_assert_int_eq(rocemu_loop_watch_fd(ctx.loop, ctx.a[0], pipe_a_ready, &ctx), 0);
	ck_assert_int_eq(rocemu_loop_watch_fd(ctx.loop, ctx.a[0], pipe_a_ready, &ctx), -EEXIST);
	ck_assert_int_eq(rocemu_loop_watch_fd(ctx.loop, ctx.b[0], pipe_b_ready, &ctx), 0);
	ck_assert_int_eq(write(ctx.a[1], "ab", 2), 2);
	run_until_stopped(ctx.loop);
	ck_assert_int_eq(ctx.a_calls, 1);
	ck_assert_int_eq(ctx.b_calls, 1);
	ck_assert_int_eq(rocemu_loop_unwatch_fd(ctx.loop, ctx.b[0]), 0);
	/* The fd can be watched again after it was unwatched. */
	ck_assert_int_eq(rocemu_loop_watch_fd(ctx.loop, ctx.a[0], pipe_b_ready, &ctx), 0);
	run_until_stopped(ctx.loop);
	ck_assert_int_eq(ctx.b_calls, 2);
	rocemu_loop_free(ctx.loop);
	for (int i = 0; i < 2; i++) {
		close(ctx.a[i]);
		close(ctx.b[i]);
	}
}
END_TEST

static void pipe_read_one(void *arg, int fd, uint32_t revents)
{
	struct pipe_ctx *ctx = arg;
	char c;

	ck_assert_int_eq(read(fd, &c, 1), 1);
	if (++ctx->a_calls == 3)
		rocemu_loop_stop(ctx->loop);
}

/* Readiness is level-triggered on both backends: unread data is reported again. */
START_TEST(test_watch_fd_level_triggered)
{
	struct pipe_ctx ctx = { .loop = loop_new(_i) };

	ck_assert_int_eq(pipe(ctx.a), 0);
	ck_assert_int_eq(rocemu_loop_watch_fd(ctx.loop, ctx.a[0], pipe_read_one, &ctx), 0);
	ck_assert_int_eq(write(ctx.a[1], "abc", 3), 3);
	run_until_stopped(ctx.loop);
	ck_assert_int_eq(ctx.a_calls, 3);
	rocemu_loop_free(ctx.loop);
	close(ctx.a[0]);
	close(ctx.a[1]);
}
END_TEST

/* ---- UDP ---- */

static uint8_t pattern(int msg, size_t byte, int dir)
{
	return (uint8_t)(msg * 7 + byte * 13 + dir * 101);
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

static const size_t exchange_sizes[] = { 1, 2, 100, 1472, 4096, 9000, 65507 };
#define NEXCHANGE (sizeof(exchange_sizes) / sizeof(exchange_sizes[0]))

struct udp_ctx {
	struct rocemu_loop *loop;
	int fd[2];
	struct sockaddr_in addr[2];
	int got[2];
	bool want_vouched;	/* sent with rocemu_loop_send_vouched and handed over in the loop */
	size_t lens[8];
	uint8_t buf[65507];
};

static void expect_dgram(const struct rocemu_dgram *d, const struct sockaddr_in *from, int msg,
			 size_t len, int dir)
{
	ck_assert_uint_eq(d->len, len);
	ck_assert_uint_eq(d->src.sin_addr.s_addr, from->sin_addr.s_addr);
	ck_assert_uint_eq(d->src.sin_port, from->sin_port);
	for (size_t j = 0; j < len; j++)
		if (d->data[j] != pattern(msg, j, dir))
			ck_abort_msg("message %d byte %zu: 0x%02x, expected 0x%02x", msg, j,
				     d->data[j], pattern(msg, j, dir));
}

/* Queue message msg of direction dir from end `from` to the other end, in two pieces. */
static void send_pattern(struct udp_ctx *ctx, int from, int msg, size_t len)
{
	struct iovec iov[2];

	for (size_t j = 0; j < len; j++)
		ctx->buf[j] = pattern(msg, j, from);
	iov[0] = (struct iovec){ ctx->buf, len / 3 };
	iov[1] = (struct iovec){ ctx->buf + len / 3, len - len / 3 };
	ck_assert_int_eq(rocemu_loop_send(ctx->loop, ctx->fd[from], &ctx->addr[!from], iov, 2, 0), 0);
}

/* B checks what A sent and answers with a message of the same size. */
static void b_received(void *arg, int fd, const struct rocemu_dgram *d)
{
	struct udp_ctx *ctx = arg;
	int msg = ctx->got[1]++;

	ck_assert_int_eq(fd, ctx->fd[1]);
	ck_assert_int_lt(msg, (int)NEXCHANGE);
	expect_dgram(d, &ctx->addr[0], msg, exchange_sizes[msg], 0);
	ck_assert(!d->vouched);	/* rocemu_loop_send vouches for nothing */
	send_pattern(ctx, 1, msg, exchange_sizes[msg]);
	ck_assert_int_eq(rocemu_loop_flush(ctx->loop), 0);
}

static void a_received(void *arg, int fd, const struct rocemu_dgram *d)
{
	struct udp_ctx *ctx = arg;
	int msg = ctx->got[0]++;

	ck_assert_int_eq(fd, ctx->fd[0]);
	ck_assert_int_lt(msg, (int)NEXCHANGE);
	expect_dgram(d, &ctx->addr[1], msg, exchange_sizes[msg], 1);
	if (ctx->got[0] == (int)NEXCHANGE)
		rocemu_loop_stop(ctx->loop);
}

START_TEST(test_udp_exchange_both_ways)
{
	struct udp_ctx *ctx = calloc(1, sizeof(*ctx));

	ctx->loop = loop_new(_i);
	ctx->fd[0] = udp_open(ADDR_A, PORT_EXCHANGE, &ctx->addr[0]);
	ctx->fd[1] = udp_open(ADDR_B, PORT_EXCHANGE, &ctx->addr[1]);
	ck_assert_int_eq(rocemu_loop_add_udp(ctx->loop, ctx->fd[0], a_received, ctx), 0);
	ck_assert_int_eq(rocemu_loop_add_udp(ctx->loop, ctx->fd[1], b_received, ctx), 0);
	ck_assert_int_eq(rocemu_loop_add_udp(ctx->loop, ctx->fd[1], b_received, ctx), -EEXIST);
	for (int m = 0; m < (int)NEXCHANGE; m++)
		send_pattern(ctx, 0, m, exchange_sizes[m]);
	ck_assert_int_eq(rocemu_loop_flush(ctx->loop), 0);
	run_until_stopped(ctx->loop);
	ck_assert_int_eq(ctx->got[0], NEXCHANGE);
	ck_assert_int_eq(ctx->got[1], NEXCHANGE);
	ck_assert_int_eq(rocemu_loop_remove_udp(ctx->loop, ctx->fd[0]), 0);
	ck_assert_int_eq(rocemu_loop_remove_udp(ctx->loop, ctx->fd[1]), 0);
	ck_assert_int_eq(rocemu_loop_remove_udp(ctx->loop, ctx->fd[1]), -ENOENT);
	rocemu_loop_free(ctx->loop);
	close(ctx->fd[0]);
	close(ctx->fd[1]);
	free(ctx);
}
END_TEST

#define GSO_SEGS 8
#define GSO_SIZE 1024

/* The segment after one with `more` set comes from the same receive: it follows in its buffer. */
static const uint8_t *gso_more_next;

static void gso_received(void *arg, int fd, const struct rocemu_dgram *d)
{
	struct udp_ctx *ctx = arg;
	int seg = ctx->got[1]++;

	ck_assert_int_lt(seg, GSO_SEGS);
	expect_dgram(d, &ctx->addr[0], seg, GSO_SIZE, 0);
	ck_assert(d->vouched == ctx->want_vouched);
	if (gso_more_next)
		ck_assert_ptr_eq(d->data, gso_more_next);
	gso_more_next = d->more ? d->data + d->len : NULL;
	if (ctx->got[1] == GSO_SEGS) {
		ck_assert(!d->more);	/* the last one ends its receive */
		rocemu_loop_stop(ctx->loop);
	}
}

START_TEST(test_udp_gso_send_arrives_as_segments)
{
	struct udp_ctx *ctx = calloc(1, sizeof(*ctx));
	struct iovec iov = { ctx->buf, GSO_SEGS * GSO_SIZE };

	ctx->loop = loop_new(_i);
	ctx->fd[0] = udp_open(ADDR_A, PORT_GSO, &ctx->addr[0]);
	ctx->fd[1] = udp_open(ADDR_B, PORT_GSO, &ctx->addr[1]);
	ck_assert_int_eq(rocemu_loop_add_udp(ctx->loop, ctx->fd[1], gso_received, ctx), 0);
	for (int s = 0; s < GSO_SEGS; s++)
		for (size_t j = 0; j < GSO_SIZE; j++)
			ctx->buf[s * GSO_SIZE + j] = pattern(s, j, 0);
	/* What crossed the kernel is vouched for by nobody. */
	ck_assert_int_eq(rocemu_loop_send_vouched(ctx->loop, ctx->fd[0], &ctx->addr[1], &iov, 1,
						  GSO_SIZE), 0);
	ck_assert_int_eq(rocemu_loop_flush(ctx->loop), 0);
	run_until_stopped(ctx->loop);
	ck_assert_int_eq(ctx->got[1], GSO_SEGS);
	rocemu_loop_free(ctx->loop);
	close(ctx->fd[0]);
	close(ctx->fd[1]);
	free(ctx);
}
END_TEST

/* The kernel delivers fd nothing from its peers any more: connected elsewhere, it takes only that. */
static void kernel_refuses(int fd)
{
	struct sockaddr_in elsewhere = { .sin_family = AF_INET, .sin_port = htons(9) };

	ck_assert_int_eq(inet_pton(AF_INET, "127.0.250.9", &elsewhere.sin_addr), 1);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&elsewhere, sizeof(elsewhere)), 0);
}

START_TEST(test_local_delivery_skips_the_kernel)
{
	struct udp_ctx *ctx = calloc(1, sizeof(*ctx));

	ctx->loop = loop_new(_i);
	ck_assert(!rocemu_loop_local_delivery(ctx->loop));
	rocemu_loop_set_local_delivery(ctx->loop, true);
	ctx->fd[0] = udp_open(ADDR_A, PORT_LOCAL, &ctx->addr[0]);
	ctx->fd[1] = udp_open(ADDR_B, PORT_LOCAL, &ctx->addr[1]);
	ck_assert_int_eq(rocemu_loop_add_udp(ctx->loop, ctx->fd[0], a_received, ctx), 0);
	ck_assert_int_eq(rocemu_loop_add_udp(ctx->loop, ctx->fd[1], b_received, ctx), 0);
	kernel_refuses(ctx->fd[0]);
	kernel_refuses(ctx->fd[1]);
	for (int m = 0; m < (int)NEXCHANGE; m++)
		send_pattern(ctx, 0, m, exchange_sizes[m]);
	run_until_stopped(ctx->loop);
	ck_assert_int_eq(ctx->got[0], NEXCHANGE);
	ck_assert_int_eq(ctx->got[1], NEXCHANGE);
	rocemu_loop_free(ctx->loop);
	close(ctx->fd[0]);
	close(ctx->fd[1]);
	free(ctx);
}
END_TEST

/*
 * A send-only socket is a source once added; a GSO batch arrives as its
 * segments, vouched for as its sender did.
 */
START_TEST(test_local_delivery_from_source_socket_in_segments)
{
	struct udp_ctx *ctx = calloc(1, sizeof(*ctx));
	struct iovec iov = { ctx->buf, GSO_SEGS * GSO_SIZE };

	ctx->loop = loop_new(_i);
	rocemu_loop_set_local_delivery(ctx->loop, true);
	ctx->fd[0] = udp_open(ADDR_A, PORT_LOCAL_GSO, &ctx->addr[0]);
	ctx->fd[1] = udp_open(ADDR_B, PORT_LOCAL_GSO, &ctx->addr[1]);
	ck_assert_int_eq(rocemu_loop_add_source(ctx->loop, ctx->fd[0]), 0);
	ck_assert_int_eq(rocemu_loop_add_udp(ctx->loop, ctx->fd[1], gso_received, ctx), 0);
	kernel_refuses(ctx->fd[1]);
	for (int s = 0; s < GSO_SEGS; s++)
		for (size_t j = 0; j < GSO_SIZE; j++)
			ctx->buf[s * GSO_SIZE + j] = pattern(s, j, 0);
	ctx->want_vouched = true;
	ck_assert_int_eq(rocemu_loop_send_vouched(ctx->loop, ctx->fd[0], &ctx->addr[1], &iov, 1,
						  GSO_SIZE), 0);
	run_until_stopped(ctx->loop);
	ck_assert_int_eq(ctx->got[1], GSO_SEGS);
	ck_assert_int_eq(rocemu_loop_remove_source(ctx->loop, ctx->fd[0]), 0);
	ck_assert_int_eq(rocemu_loop_remove_source(ctx->loop, ctx->fd[0]), -ENOENT);
	rocemu_loop_free(ctx->loop);
	close(ctx->fd[0]);
	close(ctx->fd[1]);
	free(ctx);
}
END_TEST

START_TEST(test_send_rejects_oversized)
{
	struct rocemu_loop *loop = loop_new(_i);
	struct sockaddr_in dst = { .sin_family = AF_INET };
	static uint8_t big[65508];
	struct iovec iov = { big, sizeof(big) };

	ck_assert_int_eq(rocemu_loop_send(loop, 0, &dst, &iov, 1, 0), -EMSGSIZE);
	ck_assert_int_eq(rocemu_loop_send(loop, -1, &dst, &iov, 1, 0), -EINVAL);
	ck_assert_int_eq(rocemu_loop_flush(loop), 0); /* nothing was queued */
	rocemu_loop_free(loop);
}
END_TEST

/* ---- the port opener and backend choice (no loop backend involved) ---- */

START_TEST(test_udp_port_in_use_names_address_and_owner)
{
	char err[256] = "", want[64];
	int fd = rocemu_udp_port_open(inet_addr(ADDR_A), PORT_IN_USE, err, sizeof(err));
	int rc;

	ck_assert_msg(fd >= 0, "%s", err);
	rc = rocemu_udp_port_open(inet_addr(ADDR_A), PORT_IN_USE, err, sizeof(err));
	ck_assert_int_eq(rc, -EADDRINUSE);
	snprintf(want, sizeof(want), "%s:%d is already in use", ADDR_A, PORT_IN_USE);
	ck_assert_msg(strstr(err, want), "message \"%s\" lacks \"%s\"", err, want);
	/* Our own process holds it, and /proc always shows us our own fds. */
	snprintf(want, sizeof(want), "by pid %d (", (int)getpid());
	ck_assert_msg(strstr(err, want), "message \"%s\" lacks \"%s\"", err, want);
	close(fd);
}
END_TEST

START_TEST(test_backend_from_environment)
{
	struct rocemu_loop *loop;

	setenv("ROCEMU_NET", "epoll", 1);
	loop = rocemu_loop_new(ROCEMU_LOOP_AUTO);
	ck_assert_ptr_nonnull(loop);
	ck_assert_str_eq(rocemu_loop_backend_name(loop), "epoll");
	rocemu_loop_free(loop);
	setenv("ROCEMU_NET", "bogus", 1); /* a warning, then the automatic choice */
	loop = rocemu_loop_new(ROCEMU_LOOP_AUTO);
	ck_assert_ptr_nonnull(loop);
	rocemu_loop_free(loop);
	unsetenv("ROCEMU_NET");
}
END_TEST

static int uring_usable(void)
{
	struct rocemu_loop *loop = rocemu_loop_new(ROCEMU_LOOP_URING);

	if (!loop) {
		printf("SKIP: io_uring cannot be set up here (%s): the io_uring cases do not run\n",
		       strerror(errno));
		return 0;
	}
	rocemu_loop_free(loop);
	return 1;
}

/* The suite for the first nbackends of backends[]. */
static Suite *loop_suite(int nbackends)
{
	Suite *s = suite_create("loop");
	TCase *tc;

	for (int b = 0; b < nbackends; b++) {
		/* A loop test from b to b + 1: _i is the backend. */
		tc = tcase_create(backends[b].name);
		tcase_set_timeout(tc, 60);
		tcase_add_loop_test(tc, test_timers_fire_in_deadline_order, b, b + 1);
		tcase_add_loop_test(tc, test_embedded_timer_arms_once, b, b + 1);
		tcase_add_loop_test(tc, test_watch_fd_and_unwatch_in_callback, b, b + 1);
		tcase_add_loop_test(tc, test_watch_fd_level_triggered, b, b + 1);
		tcase_add_loop_test(tc, test_udp_exchange_both_ways, b, b + 1);
		tcase_add_loop_test(tc, test_udp_gso_send_arrives_as_segments, b, b + 1);
		tcase_add_loop_test(tc, test_local_delivery_skips_the_kernel, b, b + 1);
		tcase_add_loop_test(tc, test_local_delivery_from_source_socket_in_segments, b, b + 1);
		tcase_add_loop_test(tc, test_send_rejects_oversized, b, b + 1);
		suite_add_tcase(s, tc);
	}
	tc = tcase_create("udp_port");
	tcase_add_test(tc, test_udp_port_in_use_names_address_and_owner);
	tcase_add_test(tc, test_backend_from_environment);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int uring = uring_usable();
	SRunner *sr = srunner_create(loop_suite(uring ? 2 : 1));
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed)
		return EXIT_FAILURE;
	return uring ? EXIT_SUCCESS : 77;	/* io_uring untested: a skip, never a pass */
}
