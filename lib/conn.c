/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * One control connection per context: a request, then its response with
 * the same op and seq, under the connection's mutex so threads sharing a
 * context never interleave. A forked child inherits the socket but not the
 * right to use it: it never reads a parent's reply, and its first call
 * gets it a connection of its own (conn->adopt) or fails with EIO.
 */
#include "lib/shim.h"

#include <poll.h>
#include <unistd.h>

#include "rocemu/ctrl_io.h"
#include "rocemu/log.h"

/* Large enough for every fixed-size response body. */
union rocemu_any_resp {
	struct rocemu_hello_resp hello;
	struct rocemu_open_device_resp open_device;
	struct rocemu_query_device_resp query_device;
	struct rocemu_query_port_resp query_port;
	struct rocemu_alloc_pd_resp alloc_pd;
	struct rocemu_reg_mr_resp reg_mr;
	struct rocemu_create_comp_channel_resp create_comp_channel;
	struct rocemu_create_cq_resp create_cq;
	struct rocemu_resize_cq_resp resize_cq;
	struct rocemu_create_qp_resp create_qp;
	struct rocemu_query_qp_resp query_qp;
	struct rocemu_ucma_open_resp ucma_open;
	struct rocemu_ucma_write_resp ucma_write;
};

int rocemu_conn_open(struct rocemu_conn *conn)
{
	int fd = rocemu_daemon_connect();

	if (fd < 0)
		return fd;
	conn->fd = fd;
	conn->seq = 0;
	conn->pid = getpid();
	conn->lost = false;
	conn->name = NULL;
	conn->adopt = NULL;
	pthread_mutex_init(&conn->lock, NULL);
	return 0;
}

void rocemu_conn_close(struct rocemu_conn *conn)
{
	close(conn->fd);
	conn->fd = -1;
	pthread_mutex_destroy(&conn->lock);
}

static void close_fds(int *fds, int n)
{
	while (n > 0)
		close(fds[--n]);
}

/* Receive the response to (op, seq) into resp; caller holds the lock. */
static int conn_recv(struct rocemu_conn *conn, enum rocemu_ctrl_op op, uint32_t seq,
		     void *resp, int *fds, int nfds)
{
	union {
		struct rocemu_msg_hdr hdr;
		char bytes[sizeof(struct rocemu_msg_hdr) + sizeof(union rocemu_any_resp)];
	} msg;
	int got_fds[ROCEMU_CTRL_MAX_FDS], got = ROCEMU_CTRL_MAX_FDS, err;
	ssize_t n;

	n = rocemu_ctrl_recv(conn->fd, &msg, sizeof(msg), got_fds, &got);
	if (n == 0 || n == -ECONNRESET) {
		rocemu_conn_set_lost(conn);
		return -EIO;
	}
	if (n < 0)
		return (int)n;
	err = rocemu_msg_check(&msg, n, 1);
	if (!err && (msg.hdr.op != op || msg.hdr.seq != seq))
		err = -EPROTO;
	if (!err && msg.hdr.status == 0 && got != nfds)
		err = -EPROTO;
	if (err) {
		rocemu_log(ROCEMU_LOG_ERROR, "bad %s response from rocemud: %s",
			   rocemu_ctrl_op_names[op], strerror(-err));
		close_fds(got_fds, got);
		return err;
	}
	if (msg.hdr.status) {
		close_fds(got_fds, got);
		return msg.hdr.status > 0 ? -EPROTO : msg.hdr.status;
	}
	if (msg.hdr.len)
		memcpy(resp, msg.bytes + sizeof(msg.hdr), msg.hdr.len);
	if (nfds)
		memcpy(fds, got_fds, sizeof(int) * nfds);
	return 0;
}

/* Serialises adoptions: a child's threads may all make their first call at once. */
static pthread_mutex_t adopt_lock = PTHREAD_MUTEX_INITIALIZER;

/* The inherited lock may be held by a parent's thread that the child does not have. */
static void adopt_lock_reset(void)
{
	pthread_mutex_init(&adopt_lock, NULL);
}

static void adopt_lock_reset_at_fork(void)
{
	pthread_atfork(NULL, NULL, adopt_lock_reset);
}

/* In a forked child: conn becomes this process's, or -EIO when it cannot. */
static int conn_adopt(struct rocemu_conn *conn)
{
	static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
	pid_t self = getpid();
	int err = 0;

	if (!conn->adopt)
		return -EIO;
	pthread_once(&atfork_once, adopt_lock_reset_at_fork);
	pthread_mutex_lock(&adopt_lock);
	if (conn->pid != self) {
		err = conn->adopt(conn);
		if (!err) {
			pthread_mutex_init(&conn->lock, NULL);
			conn->pid = self;
			rocemu_log(ROCEMU_LOG_DEBUG, "%s: pid %d has a connection of its own",
				   conn->name ? conn->name : "rocemu", (int)self);
		}
	}
	pthread_mutex_unlock(&adopt_lock);
	return err;
}

static int conn_call(struct rocemu_conn *conn, enum rocemu_ctrl_op op, const void *req,
		     void *resp, int *fds, int nfds, int send_fd)
{
	struct rocemu_msg_hdr hdr;
	int err;

	if (rocemu_ctrl_body_size[op][1] > sizeof(union rocemu_any_resp))
		return -EMSGSIZE;
	if (__builtin_expect(getpid() != conn->pid, 0)) {
		err = conn_adopt(conn);
		if (err) {
			rocemu_log(ROCEMU_LOG_DEBUG, "%s in pid %d: the connection is pid %d's (%s)",
				   rocemu_ctrl_op_names[op], (int)getpid(), (int)conn->pid,
				   strerror(-err));
			return err;
		}
	}
	pthread_mutex_lock(&conn->lock);
	rocemu_msg_init(&hdr, op, ++conn->seq, 0, rocemu_ctrl_body_size[op][0]);
	err = rocemu_ctrl_send(conn->fd, &hdr, req, &send_fd, send_fd >= 0);
	if (err == -EPIPE || err == -ECONNRESET) {
		rocemu_conn_set_lost(conn);
		err = -EIO;
	} else if (!err)
		err = conn_recv(conn, op, hdr.seq, resp, fds, nfds);
	pthread_mutex_unlock(&conn->lock);
	return err;
}

int rocemu_conn_call(struct rocemu_conn *conn, enum rocemu_ctrl_op op,
		     const void *req, void *resp, int *fds, int nfds)
{
	return conn_call(conn, op, req, resp, fds, nfds, -1);
}

int rocemu_conn_call_fd(struct rocemu_conn *conn, enum rocemu_ctrl_op op,
			const void *req, void *resp, int send_fd)
{
	return conn_call(conn, op, req, resp, NULL, 0, send_fd);
}

void rocemu_conn_set_lost(struct rocemu_conn *conn)
{
	if (!__atomic_exchange_n(&conn->lost, true, __ATOMIC_RELAXED))
		rocemu_log(ROCEMU_LOG_WARN, "%s: rocemud is gone", conn->name ? conn->name : "rocemu");
}

void rocemu_conn_check(struct rocemu_conn *conn)
{
	/* No events asked: only a hang-up or error shows, never a reply another thread awaits. */
	struct pollfd pfd = { .fd = conn->fd, .events = 0 };

	if (rocemu_conn_is_lost(conn) || getpid() != conn->pid)
		return;
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR)))
		rocemu_conn_set_lost(conn);
}
