/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * udp_lat: the machine's own UDP loopback latency, the limit rocemu's
 * ib_send_lat is compared with. Two processes on two loopback addresses
 * bounce one 64-byte datagram; both busy-poll (non-blocking recv in a loop)
 * so that no wake-up of an idle CPU is measured. ib_send_lat reports half a
 * round trip, hence half_rtt_median_us.
 */
#include "bench_common.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MESSAGE_BYTES 64
#define SOCKET_BUFFER_BYTES (256 << 10)
/* one datagram in flight on loopback is not lost: no answer in 1 s means a broken setup */
#define REPLY_TIMEOUT_NS 1000000000ull
#define PINGER_LIMIT_NS 25000000000ull
#define PONGER_LIMIT_SECONDS 30

struct lat_options {
	struct sockaddr_in src;
	struct sockaddr_in dst;
	unsigned iters;
	unsigned warmup;
	bool pin;
};

static int connected_socket(const struct sockaddr_in *local, const struct sockaddr_in *peer)
{
	int fd = bench_udp_socket(local, SOCKET_BUFFER_BYTES);

	if (connect(fd, (const struct sockaddr *)peer, sizeof(*peer)) != 0)
		bench_die("connect");
	if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
		bench_die("fcntl O_NONBLOCK");
	return fd;
}

/* Spins until a datagram arrives or deadline passes; returns its length, or -1 at the deadline. */
static ssize_t spin_receive(int fd, char *buf, uint64_t deadline)
{
	for (;;) {
		ssize_t n = recv(fd, buf, MESSAGE_BYTES, 0);

		if (n >= 0)
			return n;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			bench_die("recv");
		if (bench_now_ns() > deadline)
			return -1;
	}
}

static void send_message(int fd, const char *buf, size_t len)
{
	while (send(fd, buf, len, 0) < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			bench_die("send");
	}
}

/* Echoes every datagram back until the parent kills it. */
static void __attribute__((noreturn)) pong(int fd)
{
	char buf[MESSAGE_BYTES];

	for (;;) {
		ssize_t n = spin_receive(fd, buf, UINT64_MAX);

		send_message(fd, buf, (size_t)n);
	}
}

/* Fills rtt_ns[0..iters) with round trips; returns 0, or -1 when a reply never came. */
static int ping(int fd, const struct lat_options *opt, uint64_t *rtt_ns)
{
	uint64_t stop = bench_now_ns() + PINGER_LIMIT_NS;
	char buf[MESSAGE_BYTES] = { 0 };

	for (unsigned i = 0; i < opt->warmup + opt->iters; i++) {
		uint64_t start = bench_now_ns();
		uint64_t deadline = start + REPLY_TIMEOUT_NS;

		memcpy(buf, &i, sizeof(i));
		send_message(fd, buf, sizeof(buf));
		do {
			if (spin_receive(fd, buf, deadline < stop ? deadline : stop) < 0)
				return -1;
		} while (memcmp(buf, &i, sizeof(i)) != 0); /* a late echo of an older ping */
		if (i >= opt->warmup)
			rtt_ns[i - opt->warmup] = bench_now_ns() - start;
	}
	return 0;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static double percentile_us(const uint64_t *sorted, unsigned count, unsigned pct)
{
	unsigned rank = (unsigned)(((uint64_t)count * pct + 99) / 100); /* nearest rank */

	return (double)sorted[rank > 0 ? rank - 1 : 0] / 1000.0;
}

static void report(const struct lat_options *opt, uint64_t *rtt_ns)
{
	double median;

	qsort(rtt_ns, opt->iters, sizeof(*rtt_ns), compare_u64);
	median = percentile_us(rtt_ns, opt->iters, 50);
	printf("udp_lat bytes=%d iters=%u rtt_median_us=%.3f rtt_p99_us=%.3f half_rtt_median_us=%.3f\n",
	       MESSAGE_BYTES, opt->iters, median, percentile_us(rtt_ns, opt->iters, 99), median / 2);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: udp_lat [--src IPV4] [--dst IPV4] [--port N] [--iters N] [--warmup N] [--no-pin]\n"
		"  Ping-pong of %d-byte datagrams between --src (127.0.90.1) and --dst\n"
		"  (127.0.90.2), both on --port (47191), both busy-polling: --warmup (1000)\n"
		"  round trips, then --iters (20000) timed ones. The two processes are\n"
		"  pinned to CPUs 0 and 1 unless --no-pin.\n",
		MESSAGE_BYTES);
}

static unsigned parse_count(const char *text, unsigned min)
{
	char *end;
	unsigned long value = strtoul(text, &end, 10);

	if (end == text || *end != '\0' || value < min || value > 10000000)
		return 0;
	return (unsigned)value;
}

static void parse_options(int argc, char **argv, struct lat_options *opt)
{
	static const struct option longopts[] = {
		{ "src", required_argument, NULL, 's' },
		{ "dst", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "no-pin", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *src = "127.0.90.1", *dst = "127.0.90.2";
	unsigned port = 47191;
	int c;

	*opt = (struct lat_options){ .iters = 20000, .warmup = 1000, .pin = true };
	while ((c = getopt_long(argc, argv, "s:d:p:n:w:Ph", longopts, NULL)) != -1) {
		switch (c) {
		case 's': src = optarg; break;
		case 'd': dst = optarg; break;
		case 'p':
			port = parse_count(optarg, 1);
			if (port == 0 || port > 65535)
				goto bad;
			break;
		case 'n':
			opt->iters = parse_count(optarg, 1);
			if (opt->iters == 0)
				goto bad;
			break;
		case 'w':
			opt->warmup = parse_count(optarg, 0);
			if (opt->warmup == 0 && strcmp(optarg, "0") != 0)
				goto bad;
			break;
		case 'P': opt->pin = false; break;
		case 'h': usage(stdout); exit(0);
		default: goto bad;
		}
	}
	if (optind != argc)
		goto bad;
	bench_parse_addr(src, (uint16_t)port, &opt->src);
	bench_parse_addr(dst, (uint16_t)port, &opt->dst);
	return;
bad:
	usage(stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	struct lat_options opt;
	pid_t parent = getpid(), ponger;
	uint64_t *rtt_ns;
	int ping_fd, pong_fd, rc;

	parse_options(argc, argv, &opt);
	rtt_ns = calloc(opt.iters, sizeof(*rtt_ns));
	if (rtt_ns == NULL)
		bench_die("calloc");
	/* both bound before the fork: the first ping cannot meet an unbound port */
	ping_fd = connected_socket(&opt.src, &opt.dst);
	pong_fd = connected_socket(&opt.dst, &opt.src);
	fflush(stdout);
	ponger = fork();
	if (ponger < 0)
		bench_die("fork");
	if (ponger == 0) {
		close(ping_fd);
		bench_bound_child(parent, PONGER_LIMIT_SECONDS);
		if (opt.pin)
			bench_pin_cpu(1);
		pong(pong_fd);
	}
	close(pong_fd);
	if (opt.pin)
		bench_pin_cpu(0);
	rc = ping(ping_fd, &opt, rtt_ns);
	kill(ponger, SIGKILL);
	waitpid(ponger, NULL, 0);
	if (rc != 0) {
		fprintf(stderr, "udp_lat: no reply within 1 s or out of time\n");
		return 1;
	}
	report(&opt, rtt_ns);
	return 0;
}
