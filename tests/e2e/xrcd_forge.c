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
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "rocemu/ctrl_io.h"

static int failures;
static uint32_t seq;

static void check(bool ok, const char *what, int status)
{
	printf("%s: %s (status %d: %s)\n", ok ? "ok" : "FAIL", what, status, strerror(-status));
	failures += !ok;
}

/* One request of op with body and send_fd (-1: none); the status, resp filled on 0. */
static int call(int sock, enum rocemu_ctrl_op op, const void *body, int send_fd, void *resp)
{
	union {
		struct rocemu_msg_hdr hdr;
		char bytes[ROCEMU_CTRL_MSG_MAX];
	} msg;
	int fds[ROCEMU_CTRL_MAX_FDS], nfds = ROCEMU_CTRL_MAX_FDS, err;
	struct rocemu_msg_hdr hdr;
	ssize_t n;

	rocemu_msg_init(&hdr, op, ++seq, 0, rocemu_ctrl_body_size[op][0]);
	err = rocemu_ctrl_send(sock, &hdr, body, &send_fd, send_fd >= 0);
	if (err)
		return err;
	n = rocemu_ctrl_recv(sock, &msg, sizeof(msg), fds, &nfds);
	if (n < (ssize_t)sizeof(msg.hdr))
		return n < 0 ? (int)n : -EPROTO;
	while (nfds > 0)
		close(fds[--nfds]);
	if (!msg.hdr.status && resp)
		memcpy(resp, msg.bytes + sizeof(msg.hdr), msg.hdr.len);
	return msg.hdr.status;
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
	open_dev.mem.self = (uintptr_t)&open_dev;
	open_dev.mem.uffd = -1;
	if (getrandom(open_dev.mem.nonce, sizeof(open_dev.mem.nonce), 0) !=
	    (ssize_t)sizeof(open_dev.mem.nonce)) {
		perror("getrandom");
		return 1;
	}
	st = call(sock, ROCEMU_OP_OPEN_DEVICE, &open_dev, -1, NULL);
	check(st == 0, "OPEN_DEVICE 0", st);

	st = call(sock, ROCEMU_OP_OPEN_XRCD, &req, -1, NULL);
	check(st == -EBADF, "a shared XRCD without the file's fd: EBADF", st);
	st = call(sock, ROCEMU_OP_OPEN_XRCD, &req, fd_a, &a);
	check(st == 0, "the XRCD of file A, with its fd", st);
	st = call(sock, ROCEMU_OP_OPEN_XRCD, &req, fd_a2, &b);
	check(st == 0 && b.xrcdn == a.xrcdn, "another fd of file A: the same domain", st);
	st = call(sock, ROCEMU_OP_OPEN_XRCD, &req, fd_b, &other);
	check(st == 0 && other.xrcdn != a.xrcdn, "file B's fd: a domain of its own", st);
	return failures ? 1 : 0;
}
