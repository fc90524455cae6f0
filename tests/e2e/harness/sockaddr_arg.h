/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* An IPv4 address and port of the command line, for the RDMA CM e2e programs. */
#ifndef ROCEMU_TESTS_E2E_SOCKADDR_ARG_H
#define ROCEMU_TESTS_E2E_SOCKADDR_ARG_H

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

/* ip:port as a sockaddr_in; exits 2 (a usage error) when ip is not an IPv4 address. */
static inline struct sockaddr_in addr_of(const char *ip, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", ip);
		exit(2);
	}
	return a;
}

#endif /* ROCEMU_TESTS_E2E_SOCKADDR_ARG_H */
