/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A plain TCP program, for librspreload to carry over rsockets: the client
 * sends BYTES bytes of a pattern, the server checks them and sends them
 * back, the client checks the echo. Nothing in it knows about RDMA.
 *
 * usage: tcp_echo server|client ADDR PORT BYTES
 * The server prints "ready" once it listens; each side prints "ok: ..." or
 * "FAIL: ..." and exits 0 when its data was intact.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static unsigned char pattern_at(size_t i)
{
	return (unsigned char)(i * 7 + i / 251 + 3);
}

/* Receive n bytes, each checked against the pattern: the index of the first wrong one, or n. */
static size_t recv_checked(int fd, size_t n)
{
	unsigned char buf[65536];
	size_t got = 0, bad = n, i;
	ssize_t r;

	while (got < n && (r = recv(fd, buf, sizeof(buf) < n - got ? sizeof(buf) : n - got, 0)) > 0) {
		for (i = 0; i < (size_t)r && bad == n; i++)
			if (buf[i] != pattern_at(got + i))
				bad = got + i;
		got += (size_t)r;
	}
	return got < n ? got : bad;
}

static int send_pattern(int fd, size_t n)
{
	unsigned char buf[65536];
	size_t sent = 0, i, chunk;

	while (sent < n) {
		chunk = sizeof(buf) < n - sent ? sizeof(buf) : n - sent;
		for (i = 0; i < chunk; i++)
			buf[i] = pattern_at(sent + i);
		for (i = 0; i < chunk;) {
			ssize_t w = send(fd, buf + i, chunk - i, 0);

			if (w <= 0)
				return -1;
			i += (size_t)w;
		}
		sent += chunk;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd, conn, one = 1;
	size_t n, at;
	bool server;

	if (argc != 5 || inet_pton(AF_INET, argv[2], &a.sin_addr) != 1) {
		fprintf(stderr, "usage: %s server|client ADDR PORT BYTES\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	server = !strcmp(argv[1], "server");
	a.sin_port = htons((unsigned short)atoi(argv[3]));
	n = strtoul(argv[4], NULL, 10);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	if (server) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1)) {
			perror("bind, listen");
			return 1;
		}
		printf("ready\n");
		conn = accept(fd, NULL, NULL);
		if (conn < 0) {
			perror("accept");
			return 1;
		}
		at = recv_checked(conn, n);
		printf("%s: server received %zu bytes intact of %zu\n", at == n ? "ok" : "FAIL", at, n);
		if (at != n || send_pattern(conn, n)) {
			printf("FAIL: server echo\n");
			return 1;
		}
		close(conn);
	} else {
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) || send_pattern(fd, n)) {
			perror("connect, send");
			return 1;
		}
		at = recv_checked(fd, n);
		printf("%s: client got %zu bytes of echo intact of %zu\n", at == n ? "ok" : "FAIL", at, n);
		if (at != n)
			return 1;
	}
	close(fd);
	return 0;
}
