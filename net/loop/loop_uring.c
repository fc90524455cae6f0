/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * io_uring backend. UDP sockets: multishot RECVMSG into a ring of provided
 * buffers shared by all sockets (plain RECVMSG per datagram where the kernel
 * lacks it). Watched fds: POLL_ADD re-armed after each callback, which
 * keeps epoll's level-triggered meaning (a multishot poll fires on wake-ups
 * only, so data a callback leaves unread would never be reported again).
 * Sends: one SENDMSG per queued datagram, submitted together; the loop's
 * own flush before it polls leaves them to the poll's io_uring_enter,
 * which reaps them with whatever else completed. The ring is
 * SINGLE_ISSUER|DEFER_TASKRUN where allowed: every submit and wait happens
 * on the thread that made the loop, and waits always enter the kernel
 * (with DEFER_TASKRUN socket completions only arrive then).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "net/loop/loop_backend.h"
#include "rocemu/log.h"

#define RING_ENTRIES 256u
#define BUF_ENTRIES 64u		/* provided receive buffers (a power of two) */
#define BUF_GROUP 0

/* user_data below this are control values; registrations are heap pointers above it. */
enum {
	UD_IGNORE = 0,		/* cancel requests */
	UD_SEND = 1,		/* UD_SEND + k: the k-th SENDMSG of the current flush */
	UD_CONTROL_END = UD_SEND + RING_ENTRIES,
};

/* A provided buffer holds the recvmsg header, the source address, the cmsg, then the payload. */
#define BUF_SIZE (sizeof(struct io_uring_recvmsg_out) + sizeof(struct sockaddr_in) + \
		  sizeof(union rocemu_loop_rx_cmsg) + ROCEMU_LOOP_RX_BUF)

enum reg_kind { REG_POLL, REG_RECV };

/* One watched fd or UDP socket; lives until its last request completed. */
struct reg {
	struct reg *prev, *next;
	enum reg_kind kind;
	int fd;
	uint32_t gen;
	bool armed;		/* a request is in the kernel */
	bool dispatching;	/* its callback runs now */
	bool closing;		/* unwatched: free once idle */
	bool plain_recv;	/* one RECVMSG per datagram, into buf */
	struct msghdr msg;	/* read by the kernel while a receive is armed */
	struct iovec iov;
	struct sockaddr_in name;
	union rocemu_loop_rx_cmsg cmsg;
	uint8_t *buf;
};

struct cqe_copy {
	uint64_t user_data;
	int32_t res;
	uint32_t flags;
};

struct uring_state {
	struct rocemu_loop *loop;
	struct io_uring ring;
	struct reg *regs;

	struct io_uring_buf_ring *br;	/* NULL until the first UDP socket */
	uint8_t *rx_bufs;
	bool multishot_recv;		/* false once the kernel refused a ring or a multishot */

	/* Completions taken off the ring (by a flush, or before dispatch) not yet handled. */
	struct cqe_copy *pending;
	unsigned int npending, pending_cap;

	struct msghdr tx_msgs[RING_ENTRIES];
	struct iovec tx_iov[RING_ENTRIES];
	union rocemu_loop_gso_cmsg tx_cmsg[RING_ENTRIES];
	const struct rocemu_loop_send_entry *tx_entries;
	unsigned int sends_left;
	int send_err;
};

static struct io_uring_sqe *sqe_get(struct uring_state *st)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&st->ring);

	if (!sqe) {
		io_uring_submit(&st->ring);
		sqe = io_uring_get_sqe(&st->ring);
	}
	return sqe;
}

static __attribute__((cold)) int uring_init(struct rocemu_loop *loop, void **state)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	};
	struct uring_state *st = calloc(1, sizeof(*st));
	int rc;

	if (!st)
		return -ENOMEM;
	rc = io_uring_queue_init_params(RING_ENTRIES, &st->ring, &p);
	if (rc == -EINVAL) { /* kernels before 6.1 */
		memset(&p, 0, sizeof(p));
		rc = io_uring_queue_init_params(RING_ENTRIES, &st->ring, &p);
	}
	if (rc) {
		free(st);
		return rc;
	}
	st->loop = loop;
	st->multishot_recv = true;
	*state = st;
	return 0;
}

static void reg_free(struct uring_state *st, struct reg *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		st->regs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	free(r->buf);
	free(r);
}

static void uring_free(void *state)
{
	struct uring_state *st = state;

	/* Cancels every request: nothing reads our buffers afterwards. */
	io_uring_queue_exit(&st->ring);
	while (st->regs)
		reg_free(st, st->regs);
	if (st->br)
		munmap(st->br, BUF_ENTRIES * sizeof(struct io_uring_buf));
	free(st->rx_bufs);
	free(st->pending);
	free(st);
}

/* ---- arming requests ---- */

static void buf_recycle(struct uring_state *st, unsigned int bid)
{
	io_uring_buf_ring_add(st->br, st->rx_bufs + (size_t)bid * BUF_SIZE, BUF_SIZE, bid,
			      io_uring_buf_ring_mask(BUF_ENTRIES), 0);
	io_uring_buf_ring_advance(st->br, 1);
}

static __attribute__((cold)) void bufs_setup(struct uring_state *st)
{
	struct io_uring_buf_reg reg = { .ring_entries = BUF_ENTRIES, .bgid = BUF_GROUP };
	size_t ring_size = BUF_ENTRIES * sizeof(struct io_uring_buf);
	void *br;

	br = mmap(NULL, ring_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	st->rx_bufs = malloc(BUF_ENTRIES * BUF_SIZE);
	if (br != MAP_FAILED && st->rx_bufs) {
		reg.ring_addr = (uintptr_t)br;
		if (!io_uring_register_buf_ring(&st->ring, &reg, 0)) {
			st->br = br;
			io_uring_buf_ring_init(st->br);
			for (unsigned int bid = 0; bid < BUF_ENTRIES; bid++)
				buf_recycle(st, bid);
			return;
		}
	}
	rocemu_log(ROCEMU_LOG_INFO,
		   "io_uring loop: no provided-buffer ring, receiving one datagram per request");
	if (br != MAP_FAILED)
		munmap(br, ring_size);
	free(st->rx_bufs);
	st->rx_bufs = NULL;
	st->multishot_recv = false;
}

static int reg_arm(struct uring_state *st, struct reg *r)
{
	struct io_uring_sqe *sqe = sqe_get(st);

	if (!sqe)
		return -EBUSY;
	if (r->kind == REG_POLL) {
		io_uring_prep_poll_add(sqe, r->fd, POLLIN);
	} else if (r->plain_recv) {
		r->iov = (struct iovec){ r->buf, ROCEMU_LOOP_RX_BUF };
		r->msg = (struct msghdr){ .msg_name = &r->name, .msg_namelen = sizeof(r->name),
					  .msg_iov = &r->iov, .msg_iovlen = 1,
					  .msg_control = r->cmsg.buf, .msg_controllen = sizeof(r->cmsg) };
		io_uring_prep_recvmsg(sqe, r->fd, &r->msg, 0);
	} else {
		/* Multishot: only the name and control lengths are read; data go to a provided buffer. */
		r->msg = (struct msghdr){ .msg_namelen = sizeof(r->name),
					  .msg_controllen = sizeof(r->cmsg) };
		io_uring_prep_recvmsg_multishot(sqe, r->fd, &r->msg, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = BUF_GROUP;
	}
	io_uring_sqe_set_data64(sqe, (uintptr_t)r);
	r->armed = true;
	return 0;
}

static int reg_switch_to_plain(struct reg *r)
{
	r->buf = malloc(ROCEMU_LOOP_RX_BUF);
	if (!r->buf)
		return -ENOMEM;
	r->plain_recv = true;
	return 0;
}

static int reg_add(struct uring_state *st, enum reg_kind kind, int fd, uint32_t gen)
{
	struct reg *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	*r = (struct reg){ .kind = kind, .fd = fd, .gen = gen };
	rc = kind == REG_RECV && !st->multishot_recv ? reg_switch_to_plain(r) : 0;
	if (!rc)
		rc = reg_arm(st, r);
	if (rc) {
		free(r->buf);
		free(r);
		return rc;
	}
	r->next = st->regs;
	if (st->regs)
		st->regs->prev = r;
	st->regs = r;
	return 0;
}

static void reg_put_if_idle(struct uring_state *st, struct reg *r)
{
	if (r->closing && !r->armed && !r->dispatching)
		reg_free(st, r);
}

/*
 * Cancel r's request before returning, so the kernel drops its reference
 * to the socket now: a port closed right after is free to bind again at
 * once (an async cancel leaves it held until the ring's teardown ends).
 * The -ECANCELED completion still arrives and frees r. Returns false when
 * the kernel has no synchronous cancel (before 6.0).
 */
static bool reg_cancel_now(struct uring_state *st, struct reg *r)
{
	struct io_uring_sync_cancel_reg cancel = {
		.addr = (uintptr_t)r,
		.timeout = { .tv_sec = -1, .tv_nsec = -1 },
	};
	int rc = io_uring_register_sync_cancel(&st->ring, &cancel);

	return rc == 0 || rc == -ENOENT || rc == -EALREADY;
}

static int reg_remove(struct uring_state *st, enum reg_kind kind, int fd, uint32_t gen)
{
	struct io_uring_sqe *sqe;
	struct reg *r;

	for (r = st->regs; r; r = r->next)
		if (r->kind == kind && r->fd == fd && r->gen == gen && !r->closing)
			break;
	if (!r)
		return -ENOENT;
	if (r->armed && !reg_cancel_now(st, r)) {
		sqe = sqe_get(st);
		if (!sqe)
			return -EBUSY;
		/* Its last completion (-ECANCELED) frees it. */
		io_uring_prep_cancel64(sqe, (uintptr_t)r, 0);
		io_uring_sqe_set_data64(sqe, UD_IGNORE);
	}
	r->closing = true;
	reg_put_if_idle(st, r);
	return 0;
}

static int uring_watch_fd(void *state, int fd, uint32_t gen)
{
	return reg_add(state, REG_POLL, fd, gen);
}

static int uring_unwatch_fd(void *state, int fd, uint32_t gen)
{
	return reg_remove(state, REG_POLL, fd, gen);
}

static int uring_add_udp(void *state, int fd, uint32_t gen)
{
	struct uring_state *st = state;

	if (st->multishot_recv && !st->br)
		bufs_setup(st);
	return reg_add(st, REG_RECV, fd, gen);
}

static int uring_remove_udp(void *state, int fd, uint32_t gen)
{
	return reg_remove(state, REG_RECV, fd, gen);
}

/* ---- completions ---- */

/* After a request ended: free a closing registration, else re-arm unless the error is final. */
static void reg_rearm(struct uring_state *st, struct reg *r, int res)
{
	int rc;

	if (r->closing) {
		reg_put_if_idle(st, r);
		return;
	}
	if (res == -EINVAL && r->kind == REG_RECV && !r->plain_recv) {
		if (st->multishot_recv)
			rocemu_log(ROCEMU_LOG_INFO,
				   "io_uring loop: no multishot recvmsg, receiving one datagram per request");
		st->multishot_recv = false;
		if (reg_switch_to_plain(r))
			res = -ENOMEM;
		else
			res = 0;
	}
	if (res == -EBADF || res == -ENOTSOCK || res == -EINVAL || res == -EOPNOTSUPP ||
	    res == -ENOMEM) {
		rocemu_log(ROCEMU_LOG_WARN, "io_uring loop: fd %d no longer watched: %s", r->fd,
			   strerror(-res));
		return;
	}
	rc = reg_arm(st, r);
	if (rc)
		rocemu_log(ROCEMU_LOG_WARN, "io_uring loop: fd %d no longer watched: %s", r->fd,
			   strerror(-rc));
}

static void dgram_dropped(const struct reg *r)
{
	rocemu_log(ROCEMU_LOG_DEBUG, "io_uring loop: fd %d dropped a truncated or non-IPv4 datagram",
		   r->fd);
}

/* A multishot receive placed one datagram (or GRO batch) in provided buffer bid. */
static void recv_provided(struct uring_state *st, struct reg *r, const struct cqe_copy *c)
{
	unsigned int bid = c->flags >> IORING_CQE_BUFFER_SHIFT;
	uint8_t *buf = st->rx_bufs + (size_t)bid * BUF_SIZE;
	struct io_uring_recvmsg_out *o = io_uring_recvmsg_validate(buf, c->res, &r->msg);
	struct rocemu_dgram d = { 0 };
	uint16_t gro_size = 0;

	if (!o || (o->flags & MSG_TRUNC) || o->namelen < sizeof(d.src)) {
		dgram_dropped(r);
	} else {
		memcpy(&d.src, io_uring_recvmsg_name(o), sizeof(d.src));
		if (d.src.sin_family != AF_INET) {
			dgram_dropped(r);
		} else {
			for (struct cmsghdr *m = io_uring_recvmsg_cmsg_firsthdr(o, &r->msg); m;
			     m = io_uring_recvmsg_cmsg_nexthdr(o, &r->msg, m))
				rocemu_loop_cmsg_take(m, &d, &gro_size);
			rocemu_loop_dgram_event(st->loop, r->fd, r->gen,
						io_uring_recvmsg_payload(o, &r->msg),
						io_uring_recvmsg_payload_length(o, c->res, &r->msg),
						&d, gro_size);
		}
	}
	buf_recycle(st, bid);
}

static void recv_complete(struct uring_state *st, struct reg *r, const struct cqe_copy *c)
{
	if (c->res >= 0 && r->plain_recv) {
		struct rocemu_dgram d = { .src = r->name };
		uint16_t gro_size = 0;

		if ((r->msg.msg_flags & MSG_TRUNC) || r->msg.msg_namelen < sizeof(r->name) ||
		    r->name.sin_family != AF_INET) {
			dgram_dropped(r);
		} else {
			rocemu_loop_cmsgs_take(&r->msg, &d, &gro_size);
			rocemu_loop_dgram_event(st->loop, r->fd, r->gen, r->buf, (size_t)c->res,
						&d, gro_size);
		}
	} else if (c->res >= 0 && (c->flags & IORING_CQE_F_BUFFER)) {
		recv_provided(st, r, c);
	} else if (c->res < 0 && c->res != -ENOBUFS && c->res != -ECANCELED) {
		rocemu_log(ROCEMU_LOG_DEBUG, "io_uring loop: receive on fd %d: %s", r->fd,
			   strerror(-c->res));
	}
}

static void cqe_handle(struct uring_state *st, const struct cqe_copy *c)
{
	struct reg *r = (struct reg *)(uintptr_t)c->user_data;
	bool more = c->flags & IORING_CQE_F_MORE;

	r->armed = more;
	r->dispatching = true;
	if (r->kind == REG_RECV)
		recv_complete(st, r, c);
	else if (c->res > 0)
		rocemu_loop_fd_event(st->loop, r->fd, r->gen,
				     (uint32_t)c->res & (POLLIN | POLLOUT | POLLERR | POLLHUP));
	r->dispatching = false;
	if (!more)
		reg_rearm(st, r, c->res < 0 ? c->res : 0);
}

static void send_complete(struct uring_state *st, unsigned int k, int res)
{
	st->sends_left--;
	if (res >= 0)
		return;
	rocemu_loop_send_dropped("io_uring", &st->tx_entries[k], -res);
	if (!st->send_err)
		st->send_err = res;
}

static int pending_push(struct uring_state *st, const struct io_uring_cqe *cqe)
{
	if (st->npending == st->pending_cap) {
		unsigned int n = st->pending_cap ? st->pending_cap * 2 : RING_ENTRIES;
		struct cqe_copy *p = realloc(st->pending, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		st->pending = p;
		st->pending_cap = n;
	}
	st->pending[st->npending++] = (struct cqe_copy){ cqe->user_data, cqe->res, cqe->flags };
	return 0;
}

/*
 * Take every completion off the ring: sends are accounted at once, the
 * rest is copied for dispatch, so callbacks (which may flush and so reap
 * again) never run while the ring is being read.
 */
static int reap(struct uring_state *st)
{
	struct io_uring_cqe *cqes[64];
	unsigned int n;
	int rc = 0;

	while ((n = io_uring_peek_batch_cqe(&st->ring, cqes, 64)) > 0) {
		unsigned int i;

		for (i = 0; i < n; i++) {
			uint64_t ud = cqes[i]->user_data;

			if (ud >= UD_SEND && ud < UD_CONTROL_END)
				send_complete(st, (unsigned int)(ud - UD_SEND), cqes[i]->res);
			else if (ud != UD_IGNORE && ud != LIBURING_UDATA_TIMEOUT &&
				 (rc = pending_push(st, cqes[i])))
				break;
		}
		io_uring_cq_advance(&st->ring, i);
		if (rc)
			return rc;
	}
	return 0;
}

/* Wait until every send submitted is done: its data are the caller's again. */
static int sends_wait(struct uring_state *st)
{
	while (st->sends_left) {
		int rc = io_uring_submit_and_wait(&st->ring, 1);

		if (rc < 0 && rc != -EINTR && rc != -EBUSY && rc != -EAGAIN)
			return rc;
		rc = reap(st);
		if (rc)
			return rc;
	}
	return 0;
}

static int uring_poll(void *state, int64_t timeout_ns)
{
	struct uring_state *st = state;
	/* Sends left by uring_send complete too: wait for one event besides them. */
	unsigned int want = st->sends_left + 1;
	struct io_uring_cqe *cqe;
	int rc;

	if (st->npending || timeout_ns == 0) {
		rc = io_uring_submit_and_get_events(&st->ring);
	} else if (timeout_ns < 0) {
		rc = io_uring_submit_and_wait(&st->ring, want);
	} else {
		struct __kernel_timespec ts = { .tv_sec = timeout_ns / 1000000000,
						.tv_nsec = timeout_ns % 1000000000 };

		rc = io_uring_submit_and_wait_timeout(&st->ring, &cqe, want, &ts, NULL);
	}
	if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EBUSY)
		return rc;
	rc = reap(st);
	/* Callbacks queue new sends into the same data: the old ones must be done. */
	if (!rc)
		rc = sends_wait(st);
	/* Indexed, not iterated by pointer: a callback's flush may append and grow the array. */
	for (unsigned int i = 0; i < st->npending; i++) {
		struct cqe_copy c = st->pending[i];

		cqe_handle(st, &c);
	}
	st->npending = 0;
	return rc;
}

/* One SENDMSG per entry, k-th of the batch tagged UD_SEND + k. */
static void sends_prep(struct uring_state *st, const struct rocemu_loop_send_entry *e,
		       unsigned int cnt, const uint8_t *data)
{
	st->tx_entries = e;
	st->send_err = 0;
	for (unsigned int k = 0; k < cnt; k++) {
		struct io_uring_sqe *sqe = sqe_get(st);

		st->sends_left++;
		if (!sqe) {
			send_complete(st, k, -EBUSY);
			continue;
		}
		rocemu_loop_msghdr_fill(&st->tx_msgs[k], &st->tx_iov[k], &st->tx_cmsg[k], &e[k], data);
		io_uring_prep_sendmsg(sqe, e[k].fd, &st->tx_msgs[k], 0);
		io_uring_sqe_set_data64(sqe, UD_SEND + k);
	}
}

static int uring_send(void *state, const struct rocemu_loop_send_entry *e, unsigned int n,
		      const uint8_t *data, bool with_poll)
{
	struct uring_state *st = state;
	int err = 0;

	/* One batch the poll submits and reaps with its own io_uring_enter. */
	if (with_poll && n <= RING_ENTRIES) {
		sends_prep(st, e, n, data);
		return 0;
	}
	for (unsigned int i = 0; i < n; i += RING_ENTRIES) {
		unsigned int cnt = n - i < RING_ENTRIES ? n - i : RING_ENTRIES;
		int rc;

		sends_prep(st, &e[i], cnt, data);
		/* The data belong to the caller once we return: wait for every send. */
		rc = sends_wait(st);
		if (rc)
			return rc;
		if (st->send_err && !err)
			err = st->send_err;
	}
	return err;
}

const struct rocemu_loop_ops rocemu_loop_uring_ops = {
	.name = "io_uring",
	.init = uring_init,
	.free = uring_free,
	.watch_fd = uring_watch_fd,
	.unwatch_fd = uring_unwatch_fd,
	.add_udp = uring_add_udp,
	.remove_udp = uring_remove_udp,
	.send = uring_send,
	.poll = uring_poll,
};
