/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/ctrl/ctrl_server.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emulator/ctrl/client_life.h"
#include "emulator/ctrl/ctrl_ops.h"
#include "emulator/engine/transport.h"
#include "emulator/sched/idle.h"
#include "rocemu/ctrl_io.h"
#include "rocemu/log.h"

/* The largest request is an RSS indirection table; anything longer is refused as -EMSGSIZE by the size check. */
#define REQUEST_MAX 16384
_Static_assert(sizeof(struct rocemu_msg_hdr) + sizeof(struct rocemu_create_rwq_ind_table_req) <
	       REQUEST_MAX, "every request fits the receive buffer");
#define NS_PER_S 1000000000ull

static void idle_expired(void *arg)
{
	struct rocemu_emu *emu = arg;

	emu->idle_timer = 0;
	rocemu_log(ROCEMU_LOG_INFO, "no connection for %llu s, exiting",
		   (unsigned long long)(emu->idle_exit_ns / NS_PER_S));
	rocemu_loop_stop(emu->loop);
}

static void idle_timer_arm(struct rocemu_emu *emu)
{
	if (emu->idle_exit_ns && !emu->idle_timer && emu->num_connections == 0)
		emu->idle_timer = rocemu_loop_timer_add(emu->loop,
							rocemu_now_ns() + emu->idle_exit_ns,
							idle_expired, emu);
}

static void idle_timer_cancel(struct rocemu_emu *emu)
{
	if (emu->idle_timer)
		rocemu_loop_timer_cancel(emu->loop, emu->idle_timer);
	emu->idle_timer = 0;
}

static void connection_close(struct rocemu_client *c)
{
	struct rocemu_emu *emu = c->emu;

	rocemu_client_free(c);
	emu->num_connections--;
	idle_timer_arm(emu);
}

static void close_fds(int *fds, int n)
{
	while (n > 0)
		close(fds[--n]);
}

/* Answer one request. Returns 0, or -errno when the connection must go. */
static int serve_request(struct rocemu_client *c, const uint8_t *buf, ssize_t n)
{
	const struct rocemu_msg_hdr *req = (const void *)buf;
	struct rocemu_ctrl_reply reply = { .body = c->emu->reply_buf };
	struct rocemu_msg_hdr resp;
	int status, err;

	if ((size_t)n < sizeof(*req)) {
		rocemu_log(ROCEMU_LOG_WARN, "pid %d: short control message (%zd bytes)",
			   (int)c->pid, n);
		return -EPROTO;
	}
	status = rocemu_msg_check(buf, (size_t)n, 0);
	if (status)
		rocemu_log(ROCEMU_LOG_WARN, "pid %d: bad request op %u: %s", (int)c->pid,
			   req->op, strerror(-status));
	else
		status = rocemu_ctrl_dispatch(c, req, buf + sizeof(*req), &reply);
	if (status && rocemu_log_enabled(ROCEMU_LOG_DEBUG) && req->op < ROCEMU_OP__COUNT &&
	    rocemu_ctrl_op_names[req->op])
		rocemu_log(ROCEMU_LOG_DEBUG, "%s pid %d %s: %s", rocemu_client_dev_name(c),
			   (int)c->pid, rocemu_ctrl_op_names[req->op], strerror(-status));
	rocemu_msg_init(&resp, req->op, req->seq, status, status ? 0 : reply.len);
	err = rocemu_ctrl_send(c->sock, &resp, reply.body, reply.fds, status ? 0 : reply.nfds);
	close_fds(reply.fds, status ? 0 : reply.nfds);
	return err;
}

static void connection_ready(void *arg, int fd, uint32_t revents)
{
	struct rocemu_client *c = arg;
	struct rocemu_emu *emu = c->emu;
	uint8_t buf[REQUEST_MAX];
	int nfds, err = 0;
	ssize_t n;

	/*
	 * A request sees the state no held placement or ACK waiting could tell
	 * apart, and after the doorbells its client rang before sending it.
	 */
	rocemu_transport_settle();
	rocemu_idle_before_request(c);
	for (;;) {
		/* At most one fd comes with a request (OPEN_XRCD's file); more are closed unread. */
		nfds = 1;
		n = rocemu_ctrl_recv(fd, buf, sizeof(buf), &c->req_fd, &nfds);
		if (n == -EAGAIN)
			return;
		if (n > 0)
			err = serve_request(c, buf, n);
		if (nfds)
			close(c->req_fd);
		c->req_fd = -1;
		if (n <= 0 || err) {
			connection_close(c);
			return;
		}
		if (emu->stop_requested) {
			rocemu_loop_stop(emu->loop);
			return;
		}
	}
}

/* The kernel's word on who connected; only our own user (or root) may drive us. */
static bool peer_allowed(int sock, struct ucred *cred)
{
	socklen_t len = sizeof(*cred);

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, cred, &len))
		return false;
	return rocemu_peer_trusted(cred->uid);
}

static void listener_ready(void *arg, int fd, uint32_t revents)
{
	struct rocemu_emu *emu = arg;
	struct rocemu_client *c;
	struct ucred cred;
	int sock;

	for (;;) {
		sock = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (sock < 0) {
			if (errno != EAGAIN && errno != EINTR)
				rocemu_log(ROCEMU_LOG_WARN, "accept: %s", strerror(errno));
			return;
		}
		if (!peer_allowed(sock, &cred)) {
			rocemu_log(ROCEMU_LOG_WARN, "refused connection of pid %d uid %u",
				   (int)cred.pid, (unsigned)cred.uid);
			close(sock);
			continue;
		}
		c = rocemu_client_new(emu, sock, cred.pid, cred.uid);
		if (!c) {
			rocemu_log(ROCEMU_LOG_WARN, "pid %d: connection refused: %s", (int)cred.pid,
				   strerror(errno));
			close(sock);
			continue;
		}
		if (rocemu_loop_watch_fd(emu->loop, sock, connection_ready, c)) {
			rocemu_log(ROCEMU_LOG_WARN, "pid %d: cannot watch connection", (int)cred.pid);
			rocemu_client_free(c);
			continue;
		}
		emu->num_connections++;
		idle_timer_cancel(emu);
	}
}

int rocemu_ctrl_server_start(struct rocemu_emu *emu, unsigned int idle_exit_s,
			     char *err, size_t errlen)
{
	struct sockaddr_un sun;
	int fd, ret;

	ret = rocemu_ctrl_addr(&sun, emu->runtime_dir);
	if (ret) {
		snprintf(err, errlen, "socket path in %s too long", emu->runtime_dir);
		return ret;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return ret;
	}
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) || listen(fd, 128)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", sun.sun_path, strerror(errno));
		close(fd);
		return ret;
	}
	ret = rocemu_loop_watch_fd(emu->loop, fd, listener_ready, emu);
	if (ret) {
		snprintf(err, errlen, "cannot watch the control socket: %s", strerror(-ret));
		close(fd);
		unlink(sun.sun_path);
		return ret;
	}
	emu->listen_fd = fd;
	emu->idle_exit_ns = (uint64_t)idle_exit_s * NS_PER_S;
	idle_timer_arm(emu);
	return 0;
}

void rocemu_ctrl_server_stop(struct rocemu_emu *emu)
{
	struct sockaddr_un sun;

	idle_timer_cancel(emu);
	if (emu->listen_fd < 0)
		return;
	rocemu_loop_unwatch_fd(emu->loop, emu->listen_fd);
	close(emu->listen_fd);
	emu->listen_fd = -1;
	if (!rocemu_ctrl_addr(&sun, emu->runtime_dir))
		unlink(sun.sun_path);
}
