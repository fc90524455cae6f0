/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * epoll backend: level-triggered readiness, recvmmsg for UDP sockets
 * (UDP_GRO batches are split by the core), sendmmsg for queued sends with
 * UDP_SEGMENT per message when it asks for segmentation offload.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "net/loop/loop_backend.h"
#include "rocemu/log.h"

#define EPOLL_EVENTS 64
#define RX_BATCH 32
#define TX_BATCH 64
/* recvmmsg calls per readiness report; level triggering brings us back for the rest. */
#define RX_ROUNDS 4
/* How long a full socket send buffer may block the loop before the datagram is dropped. */
#define TX_FULL_WAIT_MS 1000
/* Tag bit in epoll_event.data: the fd is a UDP socket (generations are 31 bits). */
#define TAG_UDP (1ull << 63)

struct epoll_state {
	struct rocemu_loop *loop;
	int epfd;
	bool no_pwait2;		/* the kernel has no epoll_pwait2 (before 5.11) */
	uint8_t *rx_bufs;	/* RX_BATCH * ROCEMU_LOOP_RX_BUF, allocated with the first UDP socket */
	struct mmsghdr rx_msgs[RX_BATCH];
	struct iovec rx_iov[RX_BATCH];
	struct sockaddr_in rx_names[RX_BATCH];
	union rocemu_loop_rx_cmsg rx_cmsg[RX_BATCH];
	struct mmsghdr tx_msgs[TX_BATCH];
	struct iovec tx_iov[TX_BATCH];
	union rocemu_loop_gso_cmsg tx_cmsg[TX_BATCH];
};

static int epoll_init(struct rocemu_loop *loop, void **state)
{
	struct epoll_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->loop = loop;
	st->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (st->epfd < 0) {
		int rc = -errno;

		free(st);
		return rc;
	}
	*state = st;
	return 0;
}

static void epoll_free(void *state)
{
	struct epoll_state *st = state;

	close(st->epfd);
	free(st->rx_bufs);
	free(st);
}

static int epoll_add(struct epoll_state *st, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag | (uint32_t)fd };

	return epoll_ctl(st->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int epoll_del(struct epoll_state *st, int fd)
{
	/* A closed fd already left the epoll set. */
	if (epoll_ctl(st->epfd, EPOLL_CTL_DEL, fd, NULL) && errno != EBADF && errno != ENOENT)
		return -errno;
	return 0;
}

static int epoll_watch_fd(void *state, int fd, uint32_t gen)
{
	return epoll_add(state, fd, (uint64_t)gen << 32);
}

static int epoll_unwatch_fd(void *state, int fd, uint32_t gen)
{
	return epoll_del(state, fd);
}

static int epoll_add_udp(void *state, int fd, uint32_t gen)
{
	struct epoll_state *st = state;

	if (!st->rx_bufs) {
		st->rx_bufs = malloc((size_t)RX_BATCH * ROCEMU_LOOP_RX_BUF);
		if (!st->rx_bufs)
			return -ENOMEM;
	}
	return epoll_add(st, fd, TAG_UDP | (uint64_t)gen << 32);
}

static int epoll_remove_udp(void *state, int fd, uint32_t gen)
{
	return epoll_del(state, fd);
}

/* Deliver one recvmmsg batch; 0 once fd was removed by a callback. */
static int udp_deliver(struct epoll_state *st, int fd, uint32_t gen, int n)
{
	for (int i = 0; i < n; i++) {
		struct msghdr *m = &st->rx_msgs[i].msg_hdr;
		struct rocemu_dgram d = { .src = st->rx_names[i] };
		uint16_t gro_size = 0;

		if ((m->msg_flags & MSG_TRUNC) || m->msg_namelen < sizeof(struct sockaddr_in) ||
		    st->rx_names[i].sin_family != AF_INET) {
			rocemu_log(ROCEMU_LOG_DEBUG, "epoll loop: fd %d dropped a truncated or non-IPv4 datagram",
				   fd);
			continue;
		}
		rocemu_loop_cmsgs_take(m, &d, &gro_size);
		if (!rocemu_loop_dgram_event(st->loop, fd, gen, st->rx_iov[i].iov_base,
					     st->rx_msgs[i].msg_len, &d, gro_size))
			return 0;
	}
	return 1;
}

static void udp_receive(struct epoll_state *st, int fd, uint32_t gen)
{
	for (int round = 0; round < RX_ROUNDS; round++) {
		int n;

		for (int i = 0; i < RX_BATCH; i++) {
			st->rx_iov[i] = (struct iovec){ st->rx_bufs + (size_t)i * ROCEMU_LOOP_RX_BUF,
							ROCEMU_LOOP_RX_BUF };
			st->rx_msgs[i].msg_hdr = (struct msghdr){
				.msg_name = &st->rx_names[i], .msg_namelen = sizeof(st->rx_names[i]),
				.msg_iov = &st->rx_iov[i], .msg_iovlen = 1,
				.msg_control = st->rx_cmsg[i].buf, .msg_controllen = sizeof(st->rx_cmsg[i]),
			};
		}
		n = recvmmsg(fd, st->rx_msgs, RX_BATCH, MSG_DONTWAIT, NULL);
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				rocemu_log(ROCEMU_LOG_DEBUG, "epoll loop: recvmmsg on fd %d: %s", fd,
					   strerror(errno));
			return;
		}
		if (!udp_deliver(st, fd, gen, n) || n < RX_BATCH)
			return;
	}
}

/*
 * Wait for events, at most timeout_ns (-1: forever). epoll_pwait2 (Linux
 * 5.11) keeps the nanoseconds, so a 16 us timer (the direct-doorbell poll)
 * is not rounded up to epoll_wait's 1 ms; older kernels get epoll_wait.
 */
static int events_wait(struct epoll_state *st, struct epoll_event *evs, int64_t timeout_ns)
{
	int timeout_ms = -1;

#ifdef SYS_epoll_pwait2
	if (!st->no_pwait2) {
		struct timespec ts = { .tv_sec = timeout_ns / 1000000000,
				       .tv_nsec = timeout_ns % 1000000000 };
		long n = syscall(SYS_epoll_pwait2, st->epfd, evs, EPOLL_EVENTS,
				 timeout_ns >= 0 ? &ts : NULL, NULL, 0);

		if (n >= 0 || errno != ENOSYS)
			return (int)n;
		st->no_pwait2 = true;
	}
#endif
	if (timeout_ns >= 0) /* rounded up: waking early would only spin */
		timeout_ms = timeout_ns / 1000000 >= INT_MAX ? INT_MAX
							    : (int)((timeout_ns + 999999) / 1000000);
	return epoll_wait(st->epfd, evs, EPOLL_EVENTS, timeout_ms);
}

static int epoll_poll(void *state, int64_t timeout_ns)
{
	struct epoll_state *st = state;
	struct epoll_event evs[EPOLL_EVENTS];
	int n;

	n = events_wait(st, evs, timeout_ns);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		uint64_t tag = evs[i].data.u64;
		int fd = (int)(uint32_t)tag;
		uint32_t gen = (uint32_t)(tag >> 32) & ROCEMU_LOOP_GEN_MASK;

		if (tag & TAG_UDP) {
			/* A stale report must not read a socket now registered anew under fd. */
			if (rocemu_loop_udp_is_current(st->loop, fd, gen))
				udp_receive(st, fd, gen);
		} else {
			rocemu_loop_fd_event(st->loop, fd, gen,
					     evs[i].events & (POLLIN | POLLOUT | POLLERR | POLLHUP));
		}
	}
	return 0;
}

/* Send cnt prepared messages of one fd; a message the kernel refuses is dropped. */
static int send_batch(struct epoll_state *st, const struct rocemu_loop_send_entry *e,
		      unsigned int cnt)
{
	unsigned int done = 0;
	int err = 0;

	while (done < cnt) {
		int r = sendmmsg(e[0].fd, st->tx_msgs + done, cnt - done, 0);
		struct pollfd pfd = { .fd = e[0].fd, .events = POLLOUT };

		if (r > 0) {
			done += r;
			continue;
		}
		if (errno == EINTR)
			continue;
		if ((errno == EAGAIN || errno == EWOULDBLOCK) && poll(&pfd, 1, TX_FULL_WAIT_MS) > 0)
			continue;
		rocemu_loop_send_dropped("epoll", &e[done], errno);
		if (!err)
			err = -errno;
		done++;
	}
	return err;
}

static int epoll_send(void *state, const struct rocemu_loop_send_entry *e, unsigned int n,
		      const uint8_t *data, bool with_poll)
{
	struct epoll_state *st = state;
	unsigned int i = 0;
	int err = 0;

	while (i < n) {
		unsigned int cnt = 0;
		int rc;

		/* sendmmsg takes one fd: batch the consecutive entries of the same socket. */
		while (i + cnt < n && cnt < TX_BATCH && e[i + cnt].fd == e[i].fd) {
			rocemu_loop_msghdr_fill(&st->tx_msgs[cnt].msg_hdr, &st->tx_iov[cnt],
						&st->tx_cmsg[cnt], &e[i + cnt], data);
			cnt++;
		}
		rc = send_batch(st, &e[i], cnt);
		if (rc && !err)
			err = rc;
		i += cnt;
	}
	return err;
}

const struct rocemu_loop_ops rocemu_loop_epoll_ops = {
	.name = "epoll",
	.init = epoll_init,
	.free = epoll_free,
	.watch_fd = epoll_watch_fd,
	.unwatch_fd = epoll_unwatch_fd,
	.add_udp = epoll_add_udp,
	.remove_udp = epoll_remove_udp,
	.send = epoll_send,
	.poll = epoll_poll,
};
