/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * In-loop delivery (private to net/loop*.c): a datagram one of the loop's
 * sockets sends to another of its sockets is handed to that socket's
 * receive callback at the top of the loop, as the kernel's loopback would
 * hand it over, without crossing the kernel. Sender and receiver see the
 * same bytes, source address and segmentation as on the UDP path; only
 * unicast to a socket the loop receives on is taken, everything else goes
 * to the kernel.
 */
#ifndef ROCEMU_NET_LOOP_LOCAL_H
#define ROCEMU_NET_LOOP_LOCAL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "net/roce/ipv4.h"

struct rocemu_loop;

/* A receiving socket bound to one unicast address. */
struct rocemu_loop_local_endpoint {
	int fd;
	uint32_t gen;
	struct sockaddr_in addr;
	size_t queued, limit;	/* bytes waiting for it; at most its socket's receive buffer */
	uint64_t drops;		/* datagrams that found it full, as the kernel drops them */
};

struct rocemu_loop_local_entry {
	int dst_fd;
	uint32_t dst_gen;
	uint16_t gso_size;
	bool vouched;
	struct sockaddr_in src;
	struct rocemu_ipv4_fields ip;
	size_t off;
	size_t len;
};

struct rocemu_loop_local_queue {
	struct rocemu_loop_local_entry *e;
	unsigned int n, cap;
	uint8_t *data;
	size_t used, size;
};

struct rocemu_loop_local {
	bool on;
	struct rocemu_loop_local_endpoint *endpoints;
	unsigned int nendpoints, endpoints_cap;
	/* Sends go to fill; a drain swaps it with drain, so callbacks may send meanwhile. */
	struct rocemu_loop_local_queue fill, drain;
};

/*
 * The unicast address fd is bound to, if it has one (getsockname), and
 * the IPv4 fields the kernel writes in its datagrams (its TTL and TOS, DF).
 */
bool rocemu_loop_local_bound(int fd, struct sockaddr_in *addr, struct rocemu_ipv4_fields *ip);

/* Receiving socket fd (generation gen) bound to addr may take datagrams. */
int rocemu_loop_local_endpoint_add(struct rocemu_loop_local *l, int fd, uint32_t gen,
				   const struct sockaddr_in *addr);
void rocemu_loop_local_endpoint_remove(struct rocemu_loop_local *l, int fd);

/*
 * Queue iov (len bytes in all) for the endpoint bound to dst, from src
 * (NULL: a socket of unknown address) whose datagrams the kernel would
 * give the IPv4 fields src_ip, vouched for by its sender or not
 * (rocemu_loop_send_vouched). The caller checks that delivery is on.
 * Returns 1 if queued, 0 if dst is not local or src unknown (send it
 * through the kernel), -errno on failure.
 */
int rocemu_loop_local_send(struct rocemu_loop_local *l, const struct sockaddr_in *src,
			   const struct rocemu_ipv4_fields *src_ip, const struct sockaddr_in *dst,
			   const struct iovec *iov, int iovcnt, size_t len, uint16_t gso_size,
			   bool vouched);

static inline bool rocemu_loop_local_pending(const struct rocemu_loop_local *l)
{
	return l->fill.n > 0;
}

/*
 * Deliver what is queued, round after round (a delivery may queue an
 * answer), until nothing is or about budget datagrams went; the rest waits
 * for the next turn of the loop. Returns how many went.
 */
unsigned int rocemu_loop_local_run(struct rocemu_loop *loop, struct rocemu_loop_local *l,
			   unsigned int budget);

void rocemu_loop_local_free(struct rocemu_loop_local *l);

/* Give back what a burst grew the queues to, once they are empty (the loop is about to sleep). */
void rocemu_loop_local_trim(struct rocemu_loop_local *l);

/* Datagrams dropped for fd, bound receiving socket, because its queue was full. */
uint64_t rocemu_loop_local_drops(const struct rocemu_loop_local *l, int fd);

#endif /* ROCEMU_NET_LOOP_LOCAL_H */
