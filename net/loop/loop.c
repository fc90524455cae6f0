/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Event-loop core: the fd table, the timer heap, the send queue, the idle
 * hook and the choice of backend. Backends (loop_uring.c, loop_epoll.c)
 * report neutral events; everything here is the same for both.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/udp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "net/loop/loop.h"
#include "net/loop/loop_backend.h"
#include "net/loop/loop_local.h"
#include "rocemu/log.h"

/* Sends queued beyond this many go out at once instead of waiting for the flush. */
#define SENDQ_BATCH 256u
/* Datagrams delivered in the loop per turn at most, so sockets and timers still get theirs. */
#define LOCAL_BUDGET 1024u
#define TIMER_NONE UINT32_MAX

/* FD_SOURCE: a socket that only sends, known for its address (in-loop delivery). */
enum fd_kind { FD_NONE, FD_WATCH, FD_UDP, FD_SOURCE };

struct fd_slot {
	enum fd_kind kind;
	uint32_t gen;
	rocemu_fd_cb fd_cb;
	rocemu_dgram_cb dgram_cb;
	void *arg;
	bool bound;		/* FD_UDP, FD_SOURCE: addr is the unicast address it is bound to */
	struct sockaddr_in addr;
	struct rocemu_ipv4_fields ip;	/* bound: what the kernel writes in its datagrams */
};

struct timer {
	uint64_t id;		/* (sequence << 32) | slot; 0 while the slot is free */
	uint64_t seq;		/* creation order: breaks ties between equal deadlines */
	uint64_t deadline_ns;
	rocemu_timer_cb cb;
	void *arg;
	uint32_t heap_pos;	/* index in loop->heap, or the next free slot while free */
};

struct rocemu_loop {
	const struct rocemu_loop_ops *ops;
	void *state;

	struct fd_slot *fds;	/* indexed by fd */
	int nfds;
	uint32_t last_gen;

	struct timer *timers;	/* slots; a timer id names its slot */
	uint32_t ntimers;
	uint32_t free_timer;	/* head of the free slot list, TIMER_NONE if empty */
	uint32_t *heap;		/* min-heap of slot numbers by (deadline, seq) */
	uint32_t heap_len;
	uint64_t timer_seq;

	struct rocemu_loop_send_entry *sendq;
	unsigned int nsend, send_cap;
	uint8_t *send_data;
	size_t send_used, send_size;

	struct rocemu_loop_local local;

	rocemu_idle_cb idle_cb;
	void *idle_arg;
	rocemu_rx_hook_cb rx_cb;
	void *rx_arg;

	int stop_fd;		/* eventfd: wakes a sleeping backend on stop */
	atomic_int stop;
};

uint64_t rocemu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- fd table ---- */

static struct fd_slot *fd_slot_get(struct rocemu_loop *loop, int fd)
{
	if (fd < 0 || fd >= loop->nfds)
		return NULL;
	return &loop->fds[fd];
}

static int fd_table_reserve(struct rocemu_loop *loop, int fd)
{
	struct fd_slot *fds;
	int n = loop->nfds ? loop->nfds : 64;

	if (fd < loop->nfds)
		return 0;
	while (n <= fd)
		n *= 2;
	fds = realloc(loop->fds, (size_t)n * sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	memset(fds + loop->nfds, 0, (size_t)(n - loop->nfds) * sizeof(*fds));
	loop->fds = fds;
	loop->nfds = n;
	return 0;
}

static int fd_register(struct rocemu_loop *loop, int fd, enum fd_kind kind, rocemu_fd_cb fd_cb,
		       rocemu_dgram_cb dgram_cb, void *arg)
{
	struct fd_slot *slot;
	uint32_t gen;
	int rc;

	if (fd < 0 || (kind != FD_SOURCE && !fd_cb && !dgram_cb))
		return -EINVAL;
	rc = fd_table_reserve(loop, fd);
	if (rc)
		return rc;
	if (loop->fds[fd].kind != FD_NONE)
		return -EEXIST;
	loop->last_gen = (loop->last_gen + 1) & ROCEMU_LOOP_GEN_MASK;
	if (!loop->last_gen)
		loop->last_gen = 1;
	gen = loop->last_gen;
	slot = &loop->fds[fd];
	*slot = (struct fd_slot){ .kind = kind, .gen = gen, .fd_cb = fd_cb,
				  .dgram_cb = dgram_cb, .arg = arg };
	if (kind != FD_WATCH)
		slot->bound = rocemu_loop_local_bound(fd, &slot->addr, &slot->ip);
	rc = kind == FD_UDP && slot->bound ?
		rocemu_loop_local_endpoint_add(&loop->local, fd, gen, &slot->addr) : 0;
	if (!rc && kind != FD_SOURCE) {
		rc = kind == FD_UDP ? loop->ops->add_udp(loop->state, fd, gen)
				    : loop->ops->watch_fd(loop->state, fd, gen);
		if (rc && kind == FD_UDP)
			rocemu_loop_local_endpoint_remove(&loop->local, fd);
	}
	if (rc)
		memset(slot, 0, sizeof(*slot));
	return rc;
}

static int fd_unregister(struct rocemu_loop *loop, int fd, enum fd_kind kind)
{
	struct fd_slot *slot = fd_slot_get(loop, fd);
	int rc;

	if (!slot || slot->kind != kind)
		return -ENOENT;
	rc = kind == FD_UDP ? loop->ops->remove_udp(loop->state, fd, slot->gen)
	   : kind == FD_WATCH ? loop->ops->unwatch_fd(loop->state, fd, slot->gen) : 0;
	if (rc)
		return rc;
	if (kind == FD_UDP)
		rocemu_loop_local_endpoint_remove(&loop->local, fd);
	memset(slot, 0, sizeof(*slot));
	return 0;
}

int rocemu_loop_watch_fd(struct rocemu_loop *loop, int fd, rocemu_fd_cb cb, void *arg)
{
	if (!cb)
		return -EINVAL;
	return fd_register(loop, fd, FD_WATCH, cb, NULL, arg);
}

int rocemu_loop_unwatch_fd(struct rocemu_loop *loop, int fd)
{
	return fd_unregister(loop, fd, FD_WATCH);
}

int rocemu_loop_add_udp(struct rocemu_loop *loop, int fd, rocemu_dgram_cb cb, void *arg)
{
	if (!cb)
		return -EINVAL;
	return fd_register(loop, fd, FD_UDP, NULL, cb, arg);
}

int rocemu_loop_remove_udp(struct rocemu_loop *loop, int fd)
{
	return fd_unregister(loop, fd, FD_UDP);
}

int rocemu_loop_add_source(struct rocemu_loop *loop, int fd)
{
	return fd_register(loop, fd, FD_SOURCE, NULL, NULL, NULL);
}

int rocemu_loop_remove_source(struct rocemu_loop *loop, int fd)
{
	return fd_unregister(loop, fd, FD_SOURCE);
}

void rocemu_loop_set_local_delivery(struct rocemu_loop *loop, bool on)
{
	loop->local.on = on;
}

bool rocemu_loop_local_delivery(const struct rocemu_loop *loop)
{
	return loop->local.on;
}

uint64_t rocemu_loop_local_drops_of(const struct rocemu_loop *loop, int fd)
{
	return rocemu_loop_local_drops(&loop->local, fd);
}

void rocemu_loop_fd_event(struct rocemu_loop *loop, int fd, uint32_t gen, uint32_t revents)
{
	struct fd_slot *slot = fd_slot_get(loop, fd);

	if (slot && slot->kind == FD_WATCH && slot->gen == gen)
		slot->fd_cb(slot->arg, fd, revents);
}

int rocemu_loop_udp_is_current(struct rocemu_loop *loop, int fd, uint32_t gen)
{
	struct fd_slot *slot = fd_slot_get(loop, fd);

	return slot && slot->kind == FD_UDP && slot->gen == gen;
}

int rocemu_loop_dgram_event(struct rocemu_loop *loop, int fd, uint32_t gen, const uint8_t *data,
			    size_t len, const struct rocemu_dgram *like, uint16_t gro_size)
{
	size_t seg = gro_size ? gro_size : len;
	struct rocemu_dgram d = *like;
	struct fd_slot *slot;
	size_t off = 0;

	d.seg = 0;
	if (loop->rx_cb)
		loop->rx_cb(loop->rx_arg);
	do {
		/* Looked up again each time: a callback may grow the table or remove fd. */
		if (!rocemu_loop_udp_is_current(loop, fd, gen))
			return 0;
		slot = &loop->fds[fd];
		d.data = data + off;
		d.len = len - off < seg ? len - off : seg;
		d.more = off + d.len < len;
		if (d.ip_known)
			d.ip.id = rocemu_ipv4_send_id(d.seg);
		slot->dgram_cb(slot->arg, fd, &d);
		off += d.len;
		d.seg++;
	} while (off < len);
	return rocemu_loop_udp_is_current(loop, fd, gen);
}

/* ---- timers: a binary min-heap of slots ordered by (deadline, creation) ---- */

static int timer_before(const struct rocemu_loop *loop, uint32_t a, uint32_t b)
{
	const struct timer *ta = &loop->timers[a], *tb = &loop->timers[b];

	if (ta->deadline_ns != tb->deadline_ns)
		return ta->deadline_ns < tb->deadline_ns;
	return ta->seq < tb->seq;
}

static void heap_set(struct rocemu_loop *loop, uint32_t pos, uint32_t slot)
{
	loop->heap[pos] = slot;
	loop->timers[slot].heap_pos = pos;
}

static void heap_up(struct rocemu_loop *loop, uint32_t pos)
{
	uint32_t slot = loop->heap[pos];

	while (pos > 0 && timer_before(loop, slot, loop->heap[(pos - 1) / 2])) {
		heap_set(loop, pos, loop->heap[(pos - 1) / 2]);
		pos = (pos - 1) / 2;
	}
	heap_set(loop, pos, slot);
}

static void heap_down(struct rocemu_loop *loop, uint32_t pos)
{
	uint32_t slot = loop->heap[pos];

	for (;;) {
		uint32_t child = 2 * pos + 1;

		if (child >= loop->heap_len)
			break;
		if (child + 1 < loop->heap_len && timer_before(loop, loop->heap[child + 1],
							       loop->heap[child]))
			child++;
		if (!timer_before(loop, loop->heap[child], slot))
			break;
		heap_set(loop, pos, loop->heap[child]);
		pos = child;
	}
	heap_set(loop, pos, slot);
}

/* Take slot out of the heap and put it on the free list. */
static void timer_release(struct rocemu_loop *loop, uint32_t slot)
{
	uint32_t pos = loop->timers[slot].heap_pos;
	uint32_t last = loop->heap[--loop->heap_len];

	if (last != slot) {
		heap_set(loop, pos, last);
		heap_up(loop, pos);
		heap_down(loop, loop->timers[last].heap_pos);
	}
	loop->timers[slot] = (struct timer){ .heap_pos = loop->free_timer };
	loop->free_timer = slot;
}

static int timers_reserve(struct rocemu_loop *loop)
{
	uint32_t n = loop->ntimers ? loop->ntimers * 2 : 64;
	struct timer *timers;
	uint32_t *heap;

	if (loop->free_timer != TIMER_NONE)
		return 0;
	timers = realloc(loop->timers, n * sizeof(*timers));
	if (!timers)
		return -ENOMEM;
	loop->timers = timers;
	heap = realloc(loop->heap, n * sizeof(*heap));
	if (!heap)
		return -ENOMEM;
	loop->heap = heap;
	/* New slots go on the free list lowest first. */
	for (uint32_t i = n; i-- > loop->ntimers;) {
		loop->timers[i] = (struct timer){ .heap_pos = loop->free_timer };
		loop->free_timer = i;
	}
	loop->ntimers = n;
	return 0;
}

uint64_t rocemu_loop_timer_add(struct rocemu_loop *loop, uint64_t deadline_ns,
			       rocemu_timer_cb cb, void *arg)
{
	struct timer *t;
	uint32_t slot;
	int rc;

	if (!cb) {
		errno = EINVAL;
		return 0;
	}
	rc = timers_reserve(loop);
	if (rc) {
		errno = -rc;
		return 0;
	}
	slot = loop->free_timer;
	t = &loop->timers[slot];
	loop->free_timer = t->heap_pos;
	t->seq = ++loop->timer_seq;
	/* The low 32 bits of seq keep ids of a reused slot distinct; | 1 keeps the id nonzero. */
	t->id = (((uint64_t)(uint32_t)t->seq | 1u) << 32) | slot;
	t->deadline_ns = deadline_ns;
	t->cb = cb;
	t->arg = arg;
	loop->heap[loop->heap_len] = slot;
	heap_up(loop, loop->heap_len++);
	return t->id;
}

void rocemu_loop_timer_cancel(struct rocemu_loop *loop, uint64_t id)
{
	uint32_t slot = (uint32_t)id;

	if (id && slot < loop->ntimers && loop->timers[slot].id == id)
		timer_release(loop, slot);
}

/* The loop's callback of an embedded timer: disarmed before its own runs, which may arm it again. */
static void embedded_timer_fired(void *arg)
{
	struct rocemu_loop_timer *t = arg;

	t->id = 0;
	t->cb(t->arg);
}

void rocemu_loop_timer_init(struct rocemu_loop_timer *t, rocemu_timer_cb cb, void *arg)
{
	*t = (struct rocemu_loop_timer){ .cb = cb, .arg = arg };
}

int rocemu_loop_timer_arm(struct rocemu_loop *loop, struct rocemu_loop_timer *t,
			  uint64_t deadline_ns)
{
	if (t->id)
		return 0;
	t->id = rocemu_loop_timer_add(loop, deadline_ns, embedded_timer_fired, t);
	return t->id ? 0 : -errno;
}

void rocemu_loop_timer_disarm(struct rocemu_loop *loop, struct rocemu_loop_timer *t)
{
	rocemu_loop_timer_cancel(loop, t->id);
	t->id = 0;
}

/* Run the timers due now. Timers added meanwhile wait for the next turn, so a
 * callback that re-arms itself at once cannot starve the fds. */
static void timers_run(struct rocemu_loop *loop)
{
	uint64_t now = rocemu_now_ns(), last_seq = loop->timer_seq;

	while (loop->heap_len) {
		uint32_t slot = loop->heap[0];
		struct timer t = loop->timers[slot];

		if (t.deadline_ns > now || t.seq > last_seq)
			break;
		timer_release(loop, slot);
		t.cb(t.arg);
	}
}

/* Nanoseconds until the first timer: -1 without timers, 0 when one is due. */
static int64_t timers_timeout(const struct rocemu_loop *loop)
{
	uint64_t now, deadline;

	if (!loop->heap_len)
		return -1;
	now = rocemu_now_ns();
	deadline = loop->timers[loop->heap[0]].deadline_ns;
	if (deadline <= now)
		return 0;
	return deadline - now > INT64_MAX ? INT64_MAX : (int64_t)(deadline - now);
}

/* ---- send queue ---- */

int rocemu_loop_grow(void **arr, unsigned int n, unsigned int *cap, size_t size,
		     unsigned int first)
{
	unsigned int c = *cap ? *cap * 2 : first;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*arr, c * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

int rocemu_loop_grow_bytes(uint8_t **buf, size_t used, size_t *size, size_t len, size_t first)
{
	size_t n = *size ? *size : first;
	uint8_t *p;

	if (*size - used >= len)
		return 0;
	while (n - used < len)
		n *= 2;
	p = realloc(*buf, n);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*size = n;
	return 0;
}

void rocemu_loop_iov_copy(uint8_t *to, const struct iovec *iov, int iovcnt)
{
	for (int i = 0; i < iovcnt; i++) {
		memcpy(to, iov[i].iov_base, iov[i].iov_len);
		to += iov[i].iov_len;
	}
}

static int sendq_reserve(struct rocemu_loop *loop, size_t len)
{
	int rc = rocemu_loop_grow((void **)&loop->sendq, loop->nsend, &loop->send_cap,
				  sizeof(*loop->sendq), 64);

	return rc ? rc : rocemu_loop_grow_bytes(&loop->send_data, loop->send_used,
						&loop->send_size, len, 64 * 1024);
}

static int loop_send(struct rocemu_loop *loop, int fd, const struct sockaddr_in *dst,
		     const struct iovec *iov, int iovcnt, uint16_t gso_size, bool vouched)
{
	struct rocemu_loop_send_entry *e;
	size_t len = 0;
	int rc;

	if (fd < 0 || !dst || iovcnt < 0 || (iovcnt && !iov))
		return -EINVAL;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > ROCEMU_LOOP_MAX_DGRAM)
			return -EMSGSIZE;
		len += iov[i].iov_len;
	}
	if (len > ROCEMU_LOOP_MAX_DGRAM)
		return -EMSGSIZE;
	if (loop->local.on) {
		const struct fd_slot *from = fd_slot_get(loop, fd);

		rc = rocemu_loop_local_send(&loop->local, from && from->bound ? &from->addr : NULL,
					    from ? &from->ip : NULL, dst, iov, iovcnt, len, gso_size,
					    vouched);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	if (loop->nsend >= SENDQ_BATCH)
		rocemu_loop_flush(loop);
	rc = sendq_reserve(loop, len);
	if (rc)
		return rc;
	e = &loop->sendq[loop->nsend++];
	*e = (struct rocemu_loop_send_entry){ .fd = fd, .gso_size = gso_size, .dst = *dst,
					      .off = loop->send_used, .len = len };
	rocemu_loop_iov_copy(loop->send_data + loop->send_used, iov, iovcnt);
	loop->send_used += len;
	return 0;
}

int rocemu_loop_send(struct rocemu_loop *loop, int fd, const struct sockaddr_in *dst,
		     const struct iovec *iov, int iovcnt, uint16_t gso_size)
{
	return loop_send(loop, fd, dst, iov, iovcnt, gso_size, false);
}

int rocemu_loop_send_vouched(struct rocemu_loop *loop, int fd, const struct sockaddr_in *dst,
			     const struct iovec *iov, int iovcnt, uint16_t gso_size)
{
	return loop_send(loop, fd, dst, iov, iovcnt, gso_size, true);
}

static int sendq_flush(struct rocemu_loop *loop, bool with_poll)
{
	int rc;

	if (!loop->nsend)
		return 0;
	rc = loop->ops->send(loop->state, loop->sendq, loop->nsend, loop->send_data, with_poll);
	loop->nsend = 0;
	loop->send_used = 0;
	return rc;
}

int rocemu_loop_flush(struct rocemu_loop *loop)
{
	return sendq_flush(loop, false);
}

void rocemu_loop_msghdr_fill(struct msghdr *msg, struct iovec *iov,
			     union rocemu_loop_gso_cmsg *cmsg,
			     const struct rocemu_loop_send_entry *e, const uint8_t *data)
{
	iov->iov_base = (void *)(data + e->off);
	iov->iov_len = e->len;
	*msg = (struct msghdr){ .msg_name = (void *)&e->dst, .msg_namelen = sizeof(e->dst),
				.msg_iov = iov, .msg_iovlen = 1 };
	if (e->gso_size) {
		struct cmsghdr *c;

		msg->msg_control = cmsg->buf;
		msg->msg_controllen = sizeof(cmsg->buf);
		c = CMSG_FIRSTHDR(msg);
		c->cmsg_level = SOL_UDP;
		c->cmsg_type = UDP_SEGMENT;
		c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
		memcpy(CMSG_DATA(c), &e->gso_size, sizeof(uint16_t));
	}
}

void rocemu_loop_cmsg_take(const struct cmsghdr *c, struct rocemu_dgram *d, uint16_t *gro_size)
{
	struct timespec ts;
	int value;

	if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS &&
	    c->cmsg_len >= CMSG_LEN(sizeof(ts))) {
		memcpy(&ts, CMSG_DATA(c), sizeof(ts));
		d->rx_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	} else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS &&
		   c->cmsg_len >= CMSG_LEN(1)) {
		d->ip.tos = *(const uint8_t *)CMSG_DATA(c);
	} else if (c->cmsg_len >= CMSG_LEN(sizeof(int))) {
		memcpy(&value, CMSG_DATA(c), sizeof(value));
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL &&
		    value >= 0 && value <= UINT8_MAX)
			d->ip.ttl = (uint8_t)value;
		else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO &&
			 value > 0 && value <= UINT16_MAX)
			*gro_size = (uint16_t)value;
	}
}

void rocemu_loop_cmsgs_take(struct msghdr *msg, struct rocemu_dgram *d, uint16_t *gro_size)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c))
		rocemu_loop_cmsg_take(c, d, gro_size);
}

void rocemu_loop_send_dropped(const char *backend, const struct rocemu_loop_send_entry *e, int err)
{
	static atomic_bool too_large_told;
	char addr[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &e->dst.sin_addr, addr, sizeof(addr));
	rocemu_log(ROCEMU_LOG_DEBUG, "%s loop: send of %zu bytes on fd %d to %s:%u dropped: %s",
		   backend, e->len, e->fd, addr, ntohs(e->dst.sin_port), strerror(err));
	/* Don't-fragment is set: a device MTU above the link's loses every full-size packet. */
	if (err == EMSGSIZE && !atomic_exchange(&too_large_told, true))
		rocemu_log(ROCEMU_LOG_WARN,
			   "%s loop: a datagram of %zu bytes to %s is larger than the link MTU and is dropped; give the device an MTU the link carries (ROCEMU_DEVICES name=ipv4/mtu)",
			   backend, e->gso_size ? e->gso_size : e->len, addr);
}

/* ---- setup and run ---- */

static void stop_fd_drain(void *arg, int fd, uint32_t revents)
{
	uint64_t count;

	if (read(fd, &count, sizeof(count)) < 0)
		return;
}

static enum rocemu_loop_backend backend_from_env(void)
{
	const char *env = getenv("ROCEMU_NET");

	if (!env || !*env)
		return ROCEMU_LOOP_AUTO;
	if (!strcmp(env, "io_uring"))
		return ROCEMU_LOOP_URING;
	if (!strcmp(env, "epoll"))
		return ROCEMU_LOOP_EPOLL;
	rocemu_log(ROCEMU_LOG_WARN, "ROCEMU_NET=%s is neither io_uring nor epoll, choosing automatically",
		   env);
	return ROCEMU_LOOP_AUTO;
}

static int backend_init(struct rocemu_loop *loop, enum rocemu_loop_backend backend)
{
	int rc;

	if (backend == ROCEMU_LOOP_AUTO)
		backend = backend_from_env();
	if (backend != ROCEMU_LOOP_EPOLL) {
		rc = rocemu_loop_uring_ops.init(loop, &loop->state);
		if (!rc) {
			loop->ops = &rocemu_loop_uring_ops;
			return 0;
		}
		if (backend == ROCEMU_LOOP_URING) {
			rocemu_log(ROCEMU_LOG_ERROR, "io_uring unavailable (%s)", strerror(-rc));
			return rc;
		}
		rocemu_log(ROCEMU_LOG_INFO, "io_uring unavailable (%s), using epoll", strerror(-rc));
	}
	rc = rocemu_loop_epoll_ops.init(loop, &loop->state);
	if (rc)
		return rc;
	loop->ops = &rocemu_loop_epoll_ops;
	return 0;
}

struct rocemu_loop *rocemu_loop_new(enum rocemu_loop_backend backend)
{
	struct rocemu_loop *loop = calloc(1, sizeof(*loop));
	int rc;

	if (!loop)
		return NULL;
	loop->free_timer = TIMER_NONE;
	loop->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (loop->stop_fd < 0) {
		free(loop);
		return NULL;
	}
	rc = backend_init(loop, backend);
	if (!rc) {
		rc = rocemu_loop_watch_fd(loop, loop->stop_fd, stop_fd_drain, loop);
		if (rc)
			loop->ops->free(loop->state);
	}
	if (rc) {
		close(loop->stop_fd);
		free(loop->fds);
		free(loop);
		errno = -rc;
		return NULL;
	}
	return loop;
}

void rocemu_loop_free(struct rocemu_loop *loop)
{
	if (!loop)
		return;
	loop->ops->free(loop->state);
	close(loop->stop_fd);
	free(loop->fds);
	free(loop->timers);
	free(loop->heap);
	free(loop->sendq);
	free(loop->send_data);
	rocemu_loop_local_free(&loop->local);
	free(loop);
}

const char *rocemu_loop_backend_name(const struct rocemu_loop *loop)
{
	return loop->ops->name;
}

void rocemu_loop_set_idle_hook(struct rocemu_loop *loop, rocemu_idle_cb cb, void *arg)
{
	loop->idle_cb = cb;
	loop->idle_arg = arg;
}

void rocemu_loop_set_rx_hook(struct rocemu_loop *loop, rocemu_rx_hook_cb cb, void *arg)
{
	loop->rx_cb = cb;
	loop->rx_arg = arg;
}

static void flush_logged(struct rocemu_loop *loop, bool with_poll)
{
	int rc = sendq_flush(loop, with_poll);

	if (rc)
		rocemu_log(ROCEMU_LOG_DEBUG, "%s loop: some queued datagrams were dropped (%s)",
			   loop->ops->name, strerror(-rc));
}

int rocemu_loop_run(struct rocemu_loop *loop)
{
	int rc = 0;

	while (!atomic_load(&loop->stop)) {
		int64_t timeout = timers_timeout(loop);

		if (rocemu_loop_local_pending(&loop->local))
			timeout = 0;
		if (loop->idle_cb && loop->idle_cb(loop->idle_arg, timeout != 0))
			timeout = 0;
		else if (loop->idle_cb)
			timeout = timers_timeout(loop);	/* going to sleep, it may have armed one */
		if (atomic_load(&loop->stop))
			break;
		/* What was delivered here may be answered at once: no sleep after it. */
		if (rocemu_loop_local_run(loop, &loop->local, LOCAL_BUDGET))
			timeout = 0;
		/* The sends may go with the poll's own system call. */
		flush_logged(loop, true);
		if (timeout)
			rocemu_loop_local_trim(&loop->local);
		rc = loop->ops->poll(loop->state, timeout);
		if (rc < 0 && rc != -EINTR)
			break;
		rc = 0;
		timers_run(loop);
	}
	flush_logged(loop, false);
	atomic_store(&loop->stop, 0);
	return rc;
}

void rocemu_loop_stop(struct rocemu_loop *loop)
{
	uint64_t one = 1;

	atomic_store(&loop->stop, 1);
	/* Wakes the backend if it sleeps; a full counter already means "wake up". */
	if (write(loop->stop_fd, &one, sizeof(one)) < 0)
		return;
}
