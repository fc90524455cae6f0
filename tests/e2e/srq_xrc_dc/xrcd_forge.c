/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A client that speaks the control protocol itself, as a hostile one may:
 * it asks for the shared XRC domain of a file without sending the file's
 * fd (EBADF, as uverbs gives without an fd: naming an inode is no proof),
 * then with two fds of one file (one domain) and of another (another).
 *
 *   xrcd_forge SOCKET   one line per check; exit 0 when all pass
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "tests/e2e/harness/ctrl_client.h"

static int failures;

static void check(bool ok, const char *what, int status)
{
	printf("%s: %s (status %d: %s)\n", ok ? "ok" : "FAIL", what, status, strerror(-status));
	failures += !ok;
}

int main(int argc, char **argv)
{
	struct rocemu_open_device_req open_dev = { .dev_index = 0, .pid = (uint32_t)getpid() };
	struct rocemu_open_xrcd_req req = { .oflags = O_CREAT, .shared = 1 };
	struct rocemu_open_xrcd_resp a, b, other;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char file_a[] = "/tmp/xrcd_forge.XXXXXX", file_b[] = "/tmp/xrcd_forge.XXXXXX";
	int sock, fd_a, fd_a2, fd_b, st;

	if (argc != 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: xrcd_forge SOCKET\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof(sa))) {
		perror(argv[1]);
		return 1;
	}
	fd_a = mkstemp(file_a);
	fd_b = mkstemp(file_b);
	fd_a2 = open(file_a, O_RDONLY | O_CLOEXEC);
	unlink(file_a);
	unlink(file_b);
	if (fd_a < 0 || fd_b < 0 || fd_a2 < 0) {
		perror("mkstemp");
		return 1;
	}
	/* The daemon reads the request back at its own address, nonce and all: our memory is ours. */
	st = ctrl_client_mem_proof(&open_dev.mem, &open_dev);
	if (st) {
		fprintf(stderr, "getrandom: %s\n", strerror(-st));
		return 1;
	}
	st = ctrl_client_call(sock, ROCEMU_OP_OPEN_DEVICE, &open_dev, -1, NULL, NULL, NULL);
	check(st == 0, "OPEN_DEVICE 0", st);

	st = ctrl_client_call(sock, ROCEMU_OP_OPEN_XRCD, &req, -1, NULL, NULL, NULL);
	check(st == -EBADF, "a shared XRCD without the file's fd: EBADF", st);
	st = ctrl_client_call(sock, ROCEMU_OP_OPEN_XRCD, &req, fd_a, &a, NULL, NULL);
	check(st == 0, "the XRCD of file A, with its fd", st);
	st = ctrl_client_call(sock, ROCEMU_OP_OPEN_XRCD, &req, fd_a2, &b, NULL, NULL);
	check(st == 0 && b.xrcdn == a.xrcdn, "another fd of file A: the same domain", st);
	st = ctrl_client_call(sock, ROCEMU_OP_OPEN_XRCD, &req, fd_b, &other, NULL, NULL);
	check(st == 0 && other.xrcdn != a.xrcdn, "file B's fd: a domain of its own", st);
	return failures ? 1 : 0;
}
