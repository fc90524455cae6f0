/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Moving control messages: connecting to a daemon we trust (runtime_dir.h),
 * and sending or receiving one message with its file descriptors. Header-only because
 * the shim, the daemon and the CLI all need it and share nothing else.
 * Functions return 0 (or a byte count) or a negative errno.
 */
#ifndef ROCEMU_CTRL_IO_H
#define ROCEMU_CTRL_IO_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "rocemu/ctrl.h"
#include "rocemu/runtime_dir.h"

static inline int rocemu_ctrl_addr(struct sockaddr_un *sun, const char *dir)
{
	int n;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	n = snprintf(sun->sun_path, sizeof(sun->sun_path), "%s/%s", dir, ROCEMU_CTRL_SOCKET);
	return (n < 0 || (size_t)n >= sizeof(sun->sun_path)) ? -ENAMETOOLONG : 0;
}

/*
 * Connect to the daemon of runtime dir dir, trusting it before anything is
 * sent: the directory passes rocemu_runtime_dir_check and the peer
 * rocemu_peer_check (-EPERM, why filled, otherwise). Returns the socket or
 * -errno (-ENOENT or -ECONNREFUSED: no daemon).
 */
static inline int rocemu_ctrl_connect(const char *dir, char *why, size_t why_len)
{
	struct sockaddr_un sun;
	int fd, err;

	err = rocemu_ctrl_addr(&sun, dir);
	if (!err)
		err = rocemu_runtime_dir_check(dir, why, why_len);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)))
		err = -errno;
	else
		err = rocemu_peer_check(fd, why, why_len);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Send header + body (one datagram) with nfds descriptors. */
static inline int rocemu_ctrl_send(int sock, const struct rocemu_msg_hdr *hdr,
				   const void *body, const int *fds, int nfds)
{
	struct iovec iov[2] = {
		{ .iov_base = (void *)hdr, .iov_len = sizeof(*hdr) },
		{ .iov_base = (void *)body, .iov_len = hdr->len },
	};
	union {
		char buf[CMSG_SPACE(sizeof(int) * ROCEMU_CTRL_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = hdr->len ? 2 : 1 };
	ssize_t n;

	if (nfds > ROCEMU_CTRL_MAX_FDS)
		return -EINVAL;
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == sizeof(*hdr) + hdr->len ? 0 : -EMSGSIZE;
}

/*
 * Receive one message into buf (len bytes). Received descriptors go to
 * fds (up to *nfds; extras are closed) and *nfds is set to their count.
 * Returns the message size, 0 when the peer closed, or -errno.
 */
static inline ssize_t rocemu_ctrl_recv(int sock, void *buf, size_t len, int *fds, int *nfds)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	union {
		char buf[CMSG_SPACE(sizeof(int) * ROCEMU_CTRL_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c;
	int max = nfds ? *nfds : 0, got = 0;
	ssize_t n;

	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		int count, i, *data;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		data = (int *)CMSG_DATA(c);
		for (i = 0; i < count; i++) {
			if (got < max)
				fds[got++] = data[i];
			else
				close(data[i]);
		}
	}
	if (nfds)
		*nfds = got;
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		while (got > 0)
			close(fds[--got]);
		if (nfds)
			*nfds = 0;
		return -EMSGSIZE;
	}
	return n;
}

#endif /* ROCEMU_CTRL_IO_H */
