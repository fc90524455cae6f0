/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What an event-loop backend implements (private to net/loop*.c). A
 * backend keeps its state behind one pointer and reports neutral events
 * to the core through rocemu_loop_fd_event and rocemu_loop_dgram_event.
 * Every registration carries a generation number chosen by the core; the
 * core drops events whose generation is no longer current, so a stale
 * completion never reaches a callback after its fd was unwatched.
 */
#ifndef ROCEMU_NET_LOOP_BACKEND_H
#define ROCEMU_NET_LOOP_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "net/loop/loop.h"

/* Large enough for a whole UDP_GRO batch (a UDP payload is at most 65507 bytes). */
#define ROCEMU_LOOP_RX_BUF 65536u
/* Generations are 31 bits: a backend may use the top bit of a 32-bit tag. */
#define ROCEMU_LOOP_GEN_MASK 0x7fffffffu

/* One queued datagram (or GSO batch); its bytes live at data + off in the send queue. */
struct rocemu_loop_send_entry {
	int fd;
	uint16_t gso_size;
	struct sockaddr_in dst;
	size_t off;
	size_t len;
};

/* Room for every control message a receive asks for (udp_port.c turns them on). */
union rocemu_loop_rx_cmsg {
	char buf[3 * CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct timespec))];
	struct cmsghdr align;
};

/* Room for the UDP_SEGMENT control message of one send. */
union rocemu_loop_gso_cmsg {
	char buf[CMSG_SPACE(sizeof(uint16_t))];
	struct cmsghdr align;
};

struct rocemu_loop_ops {
	const char *name;
	/* Set up the backend; 0 or -errno (the core then tries the next backend). */
	int (*init)(struct rocemu_loop *loop, void **state);
	void (*free)(void *state);
	/* Report POLLIN readiness of fd through rocemu_loop_fd_event. */
	int (*watch_fd)(void *state, int fd, uint32_t gen);
	int (*unwatch_fd)(void *state, int fd, uint32_t gen);
	/* Receive datagrams of fd and report them through rocemu_loop_dgram_event. */
	int (*add_udp)(void *state, int fd, uint32_t gen);
	int (*remove_udp)(void *state, int fd, uint32_t gen);
	/*
	 * Send n entries; the data may be reused on return. 0 or the first
	 * -errno (the rest still go). with_poll: poll is called next, before
	 * anything touches e or data; the backend may leave the sends for
	 * poll to finish (then their errors are only logged), as long as they
	 * are done before poll reports an event.
	 */
	int (*send)(void *state, const struct rocemu_loop_send_entry *e, unsigned int n,
		    const uint8_t *data, bool with_poll);
	/* Wait up to timeout_ns (-1: no limit, 0: do not block) and report what happened. */
	int (*poll)(void *state, int64_t timeout_ns);
};

extern const struct rocemu_loop_ops rocemu_loop_epoll_ops;
extern const struct rocemu_loop_ops rocemu_loop_uring_ops;

/* Neutral events, called by backends from poll. */
void rocemu_loop_fd_event(struct rocemu_loop *loop, int fd, uint32_t gen, uint32_t revents);
/*
 * Deliver what one receive returned: split into datagrams of gro_size
 * bytes when gro_size > 0 (the last one may be shorter), each described as
 * like says (source, vouched, IPv4 fields, time), with its own data, len,
 * more and seg. Returns 1 while fd is still registered with generation
 * gen, 0 once a callback removed it.
 */
int rocemu_loop_dgram_event(struct rocemu_loop *loop, int fd, uint32_t gen, const uint8_t *data,
			    size_t len, const struct rocemu_dgram *like, uint16_t gro_size);

/* 1 while fd is a UDP socket registered with generation gen: read it only then. */
int rocemu_loop_udp_is_current(struct rocemu_loop *loop, int fd, uint32_t gen);

/*
 * Room for one more element in *arr (n used of *cap, each size bytes),
 * doubling from first: 0 or -ENOMEM. The loop's queues grow this way.
 */
int rocemu_loop_grow(void **arr, unsigned int n, unsigned int *cap, size_t size,
		     unsigned int first);
/* Room for len more bytes after used in *buf of *size bytes, doubling from first. */
int rocemu_loop_grow_bytes(uint8_t **buf, size_t used, size_t *size, size_t len, size_t first);
/* Copy the iovcnt pieces of iov one after another to to. */
void rocemu_loop_iov_copy(uint8_t *to, const struct iovec *iov, int iovcnt);

/* Helpers shared by the backends. */
void rocemu_loop_msghdr_fill(struct msghdr *msg, struct iovec *iov,
			     union rocemu_loop_gso_cmsg *cmsg,
			     const struct rocemu_loop_send_entry *e, const uint8_t *data);
/*
 * Take what control message c of a receive says into d (TTL, TOS, time)
 * or *gro_size (UDP_GRO's segment size); other kinds are skipped.
 */
void rocemu_loop_cmsg_take(const struct cmsghdr *c, struct rocemu_dgram *d, uint16_t *gro_size);
/* The same for every control message of msg (recvmsg, recvmmsg). */
void rocemu_loop_cmsgs_take(struct msghdr *msg, struct rocemu_dgram *d, uint16_t *gro_size);
/* Log a datagram the kernel refused (err > 0): every one at debug, a too-large one once as a warning. */
void rocemu_loop_send_dropped(const char *backend, const struct rocemu_loop_send_entry *e, int err);

#endif /* ROCEMU_NET_LOOP_BACKEND_H */
