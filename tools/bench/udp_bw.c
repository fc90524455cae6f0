/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * udp_bw: the machine's own UDP loopback throughput, the limit rocemu's
 * ib_write_bw is compared with. A forked sender moves N bytes in 4096-byte
 * datagrams to a receiver on another loopback address, either one datagram
 * per message in sendmmsg/recvmmsg batches (--mode dgram) or with
 * segmentation offload (--mode gso: UDP_SEGMENT on send, UDP_GRO on receive).
 * Loopback may drop when the receiver falls behind: the receiver stops after
 * all bytes or 2 s of silence and reports what it got.
 */
#include "bench_common.h"

#include <errno.h>
#include <getopt.h>
#include <netinet/udp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define DATAGRAM_BYTES 4096
#define BATCH 32
/* 15 * 4096 = 61440: the most whole segments under the 65507-byte IPv4 UDP payload limit */
#define GSO_SEGMENTS 15
#define GSO_MESSAGE_BYTES (GSO_SEGMENTS * DATAGRAM_BYTES)
#define GRO_BUFFER_BYTES 65536
#define SOCKET_BUFFER_BYTES (8 << 20)
#define SILENCE_SECONDS 2
/* the receiver stops here so that the whole program ends within 30 s */
#define RECEIVE_LIMIT_SECONDS 26
#define SENDER_LIMIT_SECONDS 28

enum bw_mode { MODE_DGRAM, MODE_GSO };

static const char *const mode_names[] = {
	[MODE_DGRAM] = "dgram",
	[MODE_GSO] = "gso",
};

struct bw_options {
	enum bw_mode mode;
	struct sockaddr_in src;
	struct sockaddr_in dst;
	uint64_t bytes;
	bool pin;
};

struct bw_result {
	uint64_t bytes;
	uint64_t datagrams;
	uint64_t receives; /* messages handed to the application: datagrams / receives shows GRO at work */
	uint64_t bytes_after_first; /* what arrived after the first receive: the timed part */
	uint64_t first_ns;
	uint64_t last_ns;
};

static char payload[GSO_MESSAGE_BYTES];
static char receive_area[BATCH][GRO_BUFFER_BYTES];

static void send_batch(int fd, struct mmsghdr *msgs, unsigned count)
{
	unsigned sent = 0;

	while (sent < count) {
		int n = sendmmsg(fd, msgs + sent, count - sent, 0);

		if (n > 0)
			sent += (unsigned)n;
		else if (errno == ENOBUFS || errno == EAGAIN) /* qdisc-less lo can still push back */
			sched_yield();
		else if (errno != EINTR)
			bench_die("sendmmsg");
	}
}

static void send_all(const struct bw_options *opt)
{
	int fd = bench_udp_socket(&opt->src, SOCKET_BUFFER_BYTES);
	size_t message_bytes = DATAGRAM_BYTES;
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	uint64_t left = opt->bytes;

	if (opt->mode == MODE_GSO) {
		int segment = DATAGRAM_BYTES;

		if (setsockopt(fd, SOL_UDP, UDP_SEGMENT, &segment, sizeof(segment)) != 0)
			bench_die("setsockopt UDP_SEGMENT");
		message_bytes = GSO_MESSAGE_BYTES;
	}
	if (connect(fd, (const struct sockaddr *)&opt->dst, sizeof(opt->dst)) != 0)
		bench_die("connect");
	memset(msgs, 0, sizeof(msgs));
	while (left > 0) {
		unsigned count = 0;

		for (; count < BATCH && left > 0; count++) {
			size_t len = left < message_bytes ? (size_t)left : message_bytes;

			iov[count] = (struct iovec){ .iov_base = payload, .iov_len = len };
			msgs[count].msg_hdr.msg_iov = &iov[count];
			msgs[count].msg_hdr.msg_iovlen = 1;
			left -= len;
		}
		send_batch(fd, msgs, count);
	}
	close(fd);
}

/* The segment size GRO merged this message from, or 0 if it is one datagram. */
static int gro_segment_bytes(struct msghdr *hdr)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(hdr); c != NULL; c = CMSG_NXTHDR(hdr, c)) {
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			int segment;

			memcpy(&segment, CMSG_DATA(c), sizeof(segment));
			return segment;
		}
	}
	return 0;
}

static void account(struct bw_result *res, struct mmsghdr *msg)
{
	uint64_t len = msg->msg_len;
	int segment = gro_segment_bytes(&msg->msg_hdr);

	res->bytes += len;
	res->receives++;
	res->datagrams += segment > 0 ? (len + (uint64_t)segment - 1) / (uint64_t)segment : 1;
	if (res->first_ns != 0)
		res->bytes_after_first += len;
}

static void receive_all(int fd, const struct bw_options *opt, struct bw_result *res)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control[BATCH];
	struct timeval silence = { .tv_sec = SILENCE_SECONDS };
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	size_t buffer_bytes = opt->mode == MODE_GSO ? GRO_BUFFER_BYTES : DATAGRAM_BYTES;
	uint64_t deadline = bench_now_ns() + RECEIVE_LIMIT_SECONDS * 1000000000ull;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &silence, sizeof(silence)) != 0)
		bench_die("setsockopt SO_RCVTIMEO");
	memset(msgs, 0, sizeof(msgs));
	for (unsigned i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ .iov_base = receive_area[i], .iov_len = buffer_bytes };
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
		msgs[i].msg_hdr.msg_control = control[i].buf;
	}
	while (res->bytes < opt->bytes && bench_now_ns() < deadline) {
		int n;

		for (unsigned i = 0; i < BATCH; i++)
			msgs[i].msg_hdr.msg_controllen = sizeof(control[i].buf);
		/* blocks for the first message only; SO_RCVTIMEO turns silence into EAGAIN */
		n = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			bench_die("recvmmsg");
		}
		for (int i = 0; i < n; i++)
			account(res, &msgs[i]);
		res->last_ns = bench_now_ns();
		if (res->first_ns == 0)
			res->first_ns = res->last_ns;
	}
}

static int report(const struct bw_options *opt, const struct bw_result *res)
{
	double seconds = (double)(res->last_ns - res->first_ns) / 1e9;
	double gbps = seconds > 0 ? (double)res->bytes_after_first * 8 / seconds / 1e9 : 0;
	double loss_pct = 100.0 * (double)(opt->bytes - res->bytes) / (double)opt->bytes;

	printf("udp_bw mode=%s bytes=%llu seconds=%.6f gbps=%.3f loss_pct=%.3f datagrams=%llu receives=%llu\n",
	       mode_names[opt->mode], (unsigned long long)res->bytes, seconds, gbps, loss_pct,
	       (unsigned long long)res->datagrams, (unsigned long long)res->receives);
	return res->bytes_after_first > 0 ? 0 : 1;
}

/* Ends the sender (finished or not) and tells whether it failed on its own. */
static bool sender_failed(pid_t sender)
{
	int status;

	kill(sender, SIGKILL);
	if (waitpid(sender, &status, 0) != sender)
		bench_die("waitpid");
	return WIFEXITED(status) && WEXITSTATUS(status) != 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: udp_bw [--mode dgram|gso] [--src IPV4] [--dst IPV4] [--port N]\n"
		"              [--bytes N[K|M|G]] [--no-pin]\n"
		"  Sends --bytes (default 1G) in 4096-byte datagrams from --src (127.0.90.1)\n"
		"  to --dst (127.0.90.2) port --port (47190): dgram = sendmmsg/recvmmsg x%d,\n"
		"  gso = UDP_SEGMENT %d x %d per message, receiver with UDP_GRO.\n"
		"  Sender and receiver are pinned to CPUs 0 and 1 unless --no-pin.\n",
		BATCH, DATAGRAM_BYTES, GSO_SEGMENTS);
}

static void parse_options(int argc, char **argv, struct bw_options *opt)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "src", required_argument, NULL, 's' },
		{ "dst", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "no-pin", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *src = "127.0.90.1", *dst = "127.0.90.2";
	long port = 47190;
	int c;

	*opt = (struct bw_options){ .mode = MODE_DGRAM, .bytes = 1ull << 30, .pin = true };
	while ((c = getopt_long(argc, argv, "m:s:d:p:b:Ph", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "gso") == 0)
				opt->mode = MODE_GSO;
			else if (strcmp(optarg, "dgram") != 0)
				goto bad;
			break;
		case 's': src = optarg; break;
		case 'd': dst = optarg; break;
		case 'p':
			port = strtol(optarg, NULL, 10);
			if (port <= 0 || port > 65535)
				goto bad;
			break;
		case 'b':
			opt->bytes = bench_parse_bytes(optarg);
			if (opt->bytes == 0)
				goto bad;
			break;
		case 'P': opt->pin = false; break;
		case 'h': usage(stdout); exit(0);
		default: goto bad;
		}
	}
	if (optind != argc)
		goto bad;
	bench_parse_addr(src, 0, &opt->src);
	bench_parse_addr(dst, (uint16_t)port, &opt->dst);
	return;
bad:
	usage(stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	struct bw_options opt;
	struct bw_result res = { 0 };
	pid_t parent = getpid(), sender;
	int fd;

	parse_options(argc, argv, &opt);
	fd = bench_udp_socket(&opt.dst, SOCKET_BUFFER_BYTES); /* bound before the sender starts */
	if (opt.mode == MODE_GSO) {
		int on = 1;

		if (setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof(on)) != 0)
			bench_die("setsockopt UDP_GRO");
	}
	fflush(stdout);
	sender = fork();
	if (sender < 0)
		bench_die("fork");
	if (sender == 0) {
		close(fd);
		bench_bound_child(parent, SENDER_LIMIT_SECONDS);
		if (opt.pin)
			bench_pin_cpu(0);
		send_all(&opt);
		_exit(0);
	}
	if (opt.pin)
		bench_pin_cpu(1);
	receive_all(fd, &opt, &res);
	if (sender_failed(sender)) {
		fprintf(stderr, "udp_bw: the sender failed\n");
		report(&opt, &res);
		return 1;
	}
	return report(&opt, &res);
}
