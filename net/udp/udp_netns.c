/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "net/udp/udp_netns.h"

#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int channel = -1;	/* the daemon's end of the socketpair to the child */
static pid_t child;

/* Send an errno (0: none) over sock, and fd with it unless it is -1. */
static int send_reply(int sock, int err, int fd)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl = { 0 };
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof(err) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		ctl.hdr.cmsg_level = SOL_SOCKET;
		ctl.hdr.cmsg_type = SCM_RIGHTS;
		ctl.hdr.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&ctl.hdr), &fd, sizeof(int));
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(err) ? 0 : -errno;
}

/* The other end's errno (0 or -errno), with *fd the fd it sent or -1. */
static int recv_reply(int sock, int *fd)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	int err;
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof(err) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			      .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(err))
		return n < 0 ? -errno : -EPIPE;
	c = CMSG_FIRSTHDR(&msg);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	return -err;
}

/* Into a network namespace of our own (and a user namespace, where only that allows it). */
static int enter_namespace(void)
{
	if (!unshare(CLONE_NEWNET))
		return 0;
	if (errno != EPERM || unshare(CLONE_NEWUSER | CLONE_NEWNET))
		return -errno;
	return 0;
}

/* A new namespace's loopback is down: up, it holds all of 127.0.0.0/8. */
static int loopback_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr))
		err = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (!err && ioctl(fd, SIOCSIFFLAGS, &ifr))
		err = -errno;
	close(fd);
	return err;
}

/* The child: say whether the namespace is ready, then a socket per byte read until EOF. */
static __attribute__((noreturn)) void serve(int sock)
{
	int err, fd;
	char req;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* Only the channel and the standard streams: none of the daemon's loop or clients. */
	if (sock != STDERR_FILENO + 1 && dup2(sock, STDERR_FILENO + 1) < 0)
		_exit(1);
	sock = STDERR_FILENO + 1;
	close_range(sock + 1, ~0u, 0);
	err = enter_namespace();
	if (!err)
		err = loopback_up();
	if (send_reply(sock, -err, -1) || err)
		_exit(1);
	while (read(sock, &req, 1) == 1) {
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (send_reply(sock, fd < 0 ? errno : 0, fd))
			_exit(1);
		if (fd >= 0)
			close(fd);
	}
	_exit(0);
}

int rocemu_udp_netns_start(char *why, size_t len)
{
	int sv[2], err, none;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		err = -errno;
		snprintf(why, len, "socketpair: %s", strerror(-err));
		return err;
	}
	child = fork();
	if (child == 0) {
		close(sv[0]);
		serve(sv[1]);
	}
	err = child < 0 ? -errno : 0;
	close(sv[1]);
	if (!err) {
		/* The first answer carries no fd: the namespace is ready, or why not. */
		err = recv_reply(sv[0], &none);
	}
	if (err) {
		snprintf(why, len, "cannot make a network namespace: %s", strerror(-err));
		close(sv[0]);
		if (child > 0)
			waitpid(child, NULL, 0);
		child = 0;
		return err;
	}
	channel = sv[0];
	return 0;
}

void rocemu_udp_netns_stop(void)
{
	if (channel < 0)
		return;
	close(channel);
	channel = -1;
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;
	child = 0;
}

bool rocemu_udp_netns_active(void)
{
	return channel >= 0;
}

int rocemu_udp_socket(void)
{
	int fd, err;

	if (channel < 0) {
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		return fd < 0 ? -errno : fd;
	}
	if (write(channel, "s", 1) != 1)
		return -errno;
	err = recv_reply(channel, &fd);
	if (!err && fd < 0)
		err = -EPROTO;
	if (err && fd >= 0)
		close(fd);
	return err ? err : fd;
}
