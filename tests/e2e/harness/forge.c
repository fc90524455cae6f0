/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Forged RoCEv2 packets and the daemon's CLI for the e2e tests (see forge.h). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "forge.h"
#include "net/roce/icrc.h"
#include "net/roce/ipv4.h"
#include "net/udp/udp_port.h"
#include "verbs_pair.h"

#define ROCE_PKEY_DEFAULT 0xffff
#define CLI_OUT_MAX 65536
#define CLI_WAIT_MS 30000	/* a hang, not a slow machine */

static const char *cli_path = "rocemu";

uint32_t gid_ipv4(const union ibv_gid *gid)
{
	uint32_t addr;

	memcpy(&addr, gid->raw + 12, sizeof(addr));
	return addr;
}

bool forge_open(struct forge *f, uint32_t addr, uint16_t port)
{
	socklen_t len = sizeof(f->self);

	f->self = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port),
					.sin_addr.s_addr = addr };
	f->raw = false;
	f->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (f->fd < 0 || bind(f->fd, (struct sockaddr *)&f->self, sizeof(f->self)) ||
	    getsockname(f->fd, (struct sockaddr *)&f->self, &len)) {
		check(false, "UDP socket on %s port %u: %s", inet_ntoa(f->self.sin_addr), port,
		      strerror(errno));
		if (f->fd >= 0)
			close(f->fd);
		f->fd = -1;
		return false;
	}
	return true;
}

bool forge_open_raw(struct forge *f, uint32_t addr, uint16_t port)
{
	f->self = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port),
					.sin_addr.s_addr = addr };
	f->raw = true;
	f->fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (f->fd < 0)
		check(false, "a raw socket to send as %s port %u: %s", inet_ntoa(f->self.sin_addr),
		      port, strerror(errno));
	return f->fd >= 0;
}

void forge_close(struct forge *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

size_t forge_build(uint8_t *pkt, uint8_t opcode, uint32_t dqpn, uint32_t psn, bool ackreq,
		   size_t paylen, uint8_t fill)
{
	const struct rocemu_opcode_info *info = rocemu_opcode_info(opcode);

	if (!info)
		return 0;
	memset(pkt, 0, info->length);
	rocemu_bth_set_opcode(pkt, opcode);
	rocemu_bth_set_padcnt(pkt, rocemu_pad_bytes(paylen));
	rocemu_bth_set_pkey(pkt, ROCE_PKEY_DEFAULT);
	rocemu_bth_set_destqp(pkt, dqpn);
	rocemu_bth_set_ackreq(pkt, ackreq);
	rocemu_bth_set_psn(pkt, psn);
	memset(pkt + info->length, fill, paylen);
	memset(pkt + info->length + paylen, 0, rocemu_pad_bytes(paylen));
	return info->length + paylen + rocemu_pad_bytes(paylen);
}

size_t forge_reth_request(uint8_t *pkt, uint8_t opcode, uint32_t dqpn, uint32_t psn, uint64_t va,
			  uint32_t rkey, uint32_t dma_len, size_t paylen, uint8_t fill)
{
	size_t len = forge_build(pkt, opcode, dqpn, psn, true, paylen, fill);
	uint8_t *reth = len ? rocemu_pkt_reth(pkt) : NULL;

	if (!reth)
		return 0;
	rocemu_reth_set_va(reth, va);
	rocemu_reth_set_rkey(reth, rkey);
	rocemu_reth_set_dma_len(reth, dma_len);
	return len;
}

size_t forge_ack(uint8_t *pkt, uint32_t dqpn, uint32_t psn, uint8_t syndrome)
{
	size_t len = forge_build(pkt, ROCEMU_OP_RC_ACKNOWLEDGE, dqpn, psn, false, 0, 0);

	rocemu_aeth_set_syndrome(rocemu_pkt_aeth(pkt), syndrome);
	return len;
}

bool forge_send(struct forge *f, uint32_t dst, uint8_t *pkt, size_t len)
{
	const struct rocemu_ipv4_udp flow = { .saddr = f->self.sin_addr.s_addr, .daddr = dst,
					      .sport = f->self.sin_port,
					      .dport = htons(ROCEMU_ROCEV2_PORT) };
	const struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(ROCEMU_ROCEV2_PORT),
					.sin_addr.s_addr = dst };

	static uint8_t frame[sizeof(struct iphdr) + sizeof(struct udphdr) + FORGE_MAX];
	const struct rocemu_ipv4_fields ip = { .df = true, .ttl = ROCEMU_IPV4_TTL_DEFAULT };
	struct udphdr *udp = (struct udphdr *)(frame + sizeof(struct iphdr));
	const void *out = pkt;

	len = rocemu_icrc_append_v4(&flow, pkt, len, 0);
	if (f->raw) {
		/* UDP checksum 0, as a NIC sends: what the ICRC covers is all there is to check. */
		*udp = (struct udphdr){ .source = flow.sport, .dest = flow.dport,
					.len = htons((uint16_t)(sizeof(*udp) + len)) };
		memcpy(udp + 1, pkt, len);
		rocemu_ipv4_header((struct iphdr *)frame, &flow, &ip, len);
		len += sizeof(struct iphdr) + sizeof(*udp);
		out = frame;
	}
	if (sendto(f->fd, out, len, 0, (const struct sockaddr *)&to, sizeof(to)) != (ssize_t)len) {
		check(false, "sending a forged packet of %zu bytes: %s", len, strerror(errno));
		return false;
	}
	return true;
}

ssize_t forge_recv(struct forge *f, uint8_t *buf, size_t cap, unsigned int ms)
{
	struct pollfd p = { .fd = f->fd, .events = POLLIN };
	int n = poll(&p, 1, (int)ms);

	if (n <= 0)
		return n;
	return recv(f->fd, buf, cap, 0);
}

/* ---- the CLI ---- */

void cli_use(const char *rocemu)
{
	cli_path = rocemu;
}

/*
 * Run `rocemu ARGS...` with stdout into out (when given): its exit status,
 * or -1 when it did not end within ms (then it is killed).
 */
static int cli_run(unsigned int ms, char *out, size_t cap, const char *const args[])
{
	const char *argv[8] = { cli_path };
	struct timespec start;
	int pipefd[2] = { -1, -1 }, status;
	size_t used = 0, i;
	pid_t pid;

	for (i = 0; args[i] && i + 2 < sizeof(argv) / sizeof(argv[0]); i++)
		argv[i + 1] = args[i];
	if (out && pipe2(pipefd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(out ? pipefd[1] : null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execv(cli_path, (char *const *)argv);
		_exit(127);
	}
	if (out)
		close(pipefd[1]);
	if (pid < 0) {
		if (out)
			close(pipefd[0]);
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (out) {
			struct pollfd p = { .fd = pipefd[0], .events = POLLIN };
			ssize_t n;

			if (poll(&p, 1, 1) > 0 && used + 1 < cap &&
			    (n = read(pipefd[0], out + used, cap - used - 1)) > 0)
				used += (size_t)n;
		} else {
			usleep(1000);
		}
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (elapsed_ms(&start) > (long)ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			status = -1;
			break;
		}
	}
	if (out) {
		ssize_t n;

		while (used + 1 < cap && (n = read(pipefd[0], out + used, cap - used - 1)) > 0)
			used += (size_t)n;
		out[used] = '\0';
		close(pipefd[0]);
	}
	if (status == -1)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

bool cli_status_answers(const char *what)
{
	static const char *const args[] = { "status", NULL };
	struct timespec start;
	int ret;
	long took;

	clock_gettime(CLOCK_MONOTONIC, &start);
	ret = cli_run(CLI_WAIT_MS, NULL, 0, args);
	took = elapsed_ms(&start);
	if (ret == 0)
		check(true, "%s: rocemu status answers (%ld ms)", what, took);
	else
		check(false, "%s: rocemu status %s", what,
		      ret < 0 ? "gives no answer within the time limit" : "fails");
	return ret == 0;
}

bool cli_output(const char *cmd, char *out, size_t cap)
{
	const char *const args[] = { cmd, NULL };

	return cli_run(CLI_WAIT_MS, out, cap, args) == 0;
}

long long cli_stat(const char *dev, const char *name)
{
	static char out[CLI_OUT_MAX];
	char *line, *save = NULL;

	if (!cli_output("stats", out, sizeof(out))) {
		check(false, "rocemu stats fails");
		return -1;
	}
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char d[64], n[64];
		long long v;

		if (sscanf(line, "%63s %63s %lld", d, n, &v) == 3 && !strcmp(d, dev) &&
		    !strcmp(n, name))
			return v;
	}
	check(false, "rocemu stats has no counter %s of %s", name, dev);
	return -1;
}

bool cli_stat_reaches(const char *dev, const char *name, long long want, const char *what)
{
	struct timespec start;
	long long v;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		v = cli_stat(dev, name);
		if (v < 0)
			return false;
		if (v >= want) {
			check(true, "%s: %s %s reaches %lld", what, dev, name, want);
			return true;
		}
		usleep(10000);
	} while (elapsed_ms(&start) < CLI_WAIT_MS);
	check(false, "%s: %s %s is %lld after %d ms, want %lld", what, dev, name, v, CLI_WAIT_MS,
	      want);
	return false;
}

bool cli_fault(const char *dev, const char *spec)
{
	const char *const args[] = { "fault", dev, spec, NULL };
	int ret = cli_run(CLI_WAIT_MS, NULL, 0, args);

	if (ret)
		check(false, "rocemu fault %s %s fails", dev, spec);
	return ret == 0;
}

int forge_checks_main(int argc, char **argv, const struct named_check *checks, size_t n,
		      uint32_t *peer_addr)
{
	if (argc != 5 || inet_pton(AF_INET, argv[4], peer_addr) != 1) {
		fprintf(stderr, "usage: %s DEVICE_A DEVICE_B ROCEMU PEER_ADDR\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	cli_use(argv[3]);
	return run_checks(argv[1], argv[2], checks, n);
}

long long cli_packets_from_outside(const char *first, const char *second)
{
	const char *const devs[2] = { first, second };
	long long n = 0, v;

	for (int i = 0; i < 2; i++) {
		v = cli_stat(devs[i], "port_rcv_packets");
		if (v < 0)
			return -1;
		n += v;
		v = cli_stat(devs[i], "port_xmit_packets");
		if (v < 0)
			return -1;
		n -= v;
	}
	return n;
}
