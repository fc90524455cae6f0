/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "bench_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

void bench_die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what, strerror(errno));
	exit(1);
}

void bench_parse_addr(const char *text, uint16_t port, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	if (inet_pton(AF_INET, text, &sin->sin_addr) != 1) {
		fprintf(stderr, "%s: not an IPv4 address: %s\n", program_invocation_short_name, text);
		exit(1);
	}
}

static void set_buffer(int fd, int force_opt, int opt, int bytes)
{
	if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)) == 0)
		return;
	if (setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes)) != 0)
		bench_die("setsockopt buffer size");
}

int bench_udp_socket(const struct sockaddr_in *local, int buf_bytes)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		bench_die("socket");
	set_buffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, buf_bytes);
	set_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, buf_bytes);
	if (bind(fd, (const struct sockaddr *)local, sizeof(*local)) != 0)
		bench_die("bind");
	return fd;
}

void bench_pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu >= sysconf(_SC_NPROCESSORS_ONLN))
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set); /* a cpuset may forbid it: then run unpinned */
}

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bench_bound_child(pid_t parent, unsigned max_seconds)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
		bench_die("prctl PR_SET_PDEATHSIG");
	if (getppid() != parent) /* the parent died before prctl took effect */
		exit(1);
	alarm(max_seconds);
}

uint64_t bench_parse_bytes(const char *text)
{
	char *end;
	unsigned long long value = strtoull(text, &end, 10);
	int shift = 0;

	switch (*end) {
	case 'G': case 'g': shift = 30; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'K': case 'k': shift = 10; end++; break;
	}
	if (end == text || *end != '\0' || value > (UINT64_MAX >> shift))
		return 0;
	return (uint64_t)value << shift;
}
