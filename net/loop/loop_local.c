/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "net/loop/loop_local.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "net/loop/loop_backend.h"

#define LOCAL_QUEUE_DEFAULT (8u << 20)	/* a receive buffer getsockopt cannot tell */
#define LOCAL_QUEUE_KEEP (1u << 20)	/* kept across sleeps: what steady traffic needs */

bool rocemu_loop_local_bound(int fd, struct sockaddr_in *addr, struct rocemu_ipv4_fields *ip)
{
	socklen_t len = sizeof(*addr);
	int ttl = ROCEMU_IPV4_TTL_DEFAULT, tos = 0;

	if (getsockname(fd, (struct sockaddr *)addr, &len) || len != sizeof(*addr) ||
	    addr->sin_family != AF_INET)
		return false;
	/* IP_TTL reads net.ipv4.ip_default_ttl while the socket sets none. */
	len = sizeof(ttl);
	if (getsockopt(fd, IPPROTO_IP, IP_TTL, &ttl, &len) || ttl < 0 || ttl > UINT8_MAX)
		ttl = ROCEMU_IPV4_TTL_DEFAULT;
	len = sizeof(tos);
	if (getsockopt(fd, IPPROTO_IP, IP_TOS, &tos, &len) || tos < 0 || tos > UINT8_MAX)
		tos = 0;
	*ip = (struct rocemu_ipv4_fields){ .df = true, .ttl = (uint8_t)ttl, .tos = (uint8_t)tos };
	return addr->sin_addr.s_addr != htonl(INADDR_ANY) &&
	       !IN_MULTICAST(ntohl(addr->sin_addr.s_addr));
}

/* What the kernel would queue on fd before it drops: its receive buffer, as SO_RCVBUF reads. */

static size_t receive_buffer(int fd)
{
	socklen_t len = sizeof(int);
	int bytes;

	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, &len) || bytes <= 0)
		return LOCAL_QUEUE_DEFAULT;
	return (size_t)bytes;
}

int rocemu_loop_local_endpoint_add(struct rocemu_loop_local *l, int fd, uint32_t gen,
				   const struct sockaddr_in *addr)
{
	int rc = rocemu_loop_grow((void **)&l->endpoints, l->nendpoints, &l->endpoints_cap,
				  sizeof(*l->endpoints), 8);

	if (rc)
		return rc;
	l->endpoints[l->nendpoints++] = (struct rocemu_loop_local_endpoint){
		.fd = fd, .gen = gen, .addr = *addr, .limit = receive_buffer(fd) };
	return 0;
}

void rocemu_loop_local_endpoint_remove(struct rocemu_loop_local *l, int fd)
{
	for (unsigned int i = 0; i < l->nendpoints; i++) {
		if (l->endpoints[i].fd == fd) {
			l->endpoints[i] = l->endpoints[--l->nendpoints];
			return;
		}
	}
}

static struct rocemu_loop_local_endpoint *endpoint_of(const struct rocemu_loop_local *l,
						      const struct sockaddr_in *dst)
{
	for (unsigned int i = 0; i < l->nendpoints; i++) {
		struct rocemu_loop_local_endpoint *e = &l->endpoints[i];

		if (e->addr.sin_addr.s_addr == dst->sin_addr.s_addr &&
		    e->addr.sin_port == dst->sin_port)
			return e;
	}
	return NULL;
}

static int queue_reserve(struct rocemu_loop_local_queue *q, size_t len)
{
	int rc = rocemu_loop_grow((void **)&q->e, q->n, &q->cap, sizeof(*q->e), 64);

	return rc ? rc : rocemu_loop_grow_bytes(&q->data, q->used, &q->size, len, 256 * 1024);
}

int rocemu_loop_local_send(struct rocemu_loop_local *l, const struct sockaddr_in *src,
			   const struct rocemu_ipv4_fields *src_ip, const struct sockaddr_in *dst,
			   const struct iovec *iov, int iovcnt, size_t len, uint16_t gso_size,
			   bool vouched)
{
	struct rocemu_loop_local_endpoint *to;
	struct rocemu_loop_local_queue *q = &l->fill;
	int rc;

	if (!src || !(to = endpoint_of(l, dst)))
		return 0;
	/* A receiver that cannot keep up loses what its socket would not hold: the queue stays bounded. */
	if (to->queued + len > to->limit) {
		to->drops++;
		return 1;
	}
	rc = queue_reserve(q, len);
	if (rc)
		return rc;
	q->e[q->n++] = (struct rocemu_loop_local_entry){ .dst_fd = to->fd, .dst_gen = to->gen,
							 .gso_size = gso_size, .vouched = vouched,
							 .src = *src, .ip = *src_ip,
							 .off = q->used, .len = len };
	rocemu_loop_iov_copy(q->data + q->used, iov, iovcnt);
	q->used += len;
	to->queued += len;
	return 1;
}

/* The datagram of e leaves the queue of the endpoint it was for, if that is still there. */
static void endpoint_unqueue(struct rocemu_loop_local *l, const struct rocemu_loop_local_entry *e)
{
	for (unsigned int i = 0; i < l->nendpoints; i++) {
		if (l->endpoints[i].fd == e->dst_fd && l->endpoints[i].gen == e->dst_gen) {
			l->endpoints[i].queued -= e->len;
			return;
		}
	}
}

unsigned int rocemu_loop_local_run(struct rocemu_loop *loop, struct rocemu_loop_local *l,
				   unsigned int budget)
{
	unsigned int sent = 0;
	struct timespec now;

	while (l->fill.n && sent < budget) {
		struct rocemu_loop_local_queue q = l->fill;

		/* Arrival after every send of the round before, which queued these. */
		clock_gettime(CLOCK_REALTIME, &now);

		l->fill = l->drain;
		l->fill.n = 0;
		l->fill.used = 0;
		/* A receiver closed meanwhile loses the datagram, as its socket would. */
		for (unsigned int i = 0; i < q.n; i++) {
			const struct rocemu_dgram like = {
				.src = q.e[i].src, .vouched = q.e[i].vouched, .ip = q.e[i].ip,
				.ip_known = true,
				.rx_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec,
			};

			endpoint_unqueue(l, &q.e[i]);
			rocemu_loop_dgram_event(loop, q.e[i].dst_fd, q.e[i].dst_gen,
						q.data + q.e[i].off, q.e[i].len, &like,
						q.e[i].gso_size);
		}
		sent += q.n;
		l->drain = q;
	}
	return sent;
}

static void queue_trim(struct rocemu_loop_local_queue *q)
{
	if (q->n || q->size <= LOCAL_QUEUE_KEEP)
		return;
	free(q->e);
	free(q->data);
	*q = (struct rocemu_loop_local_queue){ 0 };
}

void rocemu_loop_local_trim(struct rocemu_loop_local *l)
{
	queue_trim(&l->fill);
	queue_trim(&l->drain);
}

uint64_t rocemu_loop_local_drops(const struct rocemu_loop_local *l, int fd)
{
	for (unsigned int i = 0; i < l->nendpoints; i++)
		if (l->endpoints[i].fd == fd)
			return l->endpoints[i].drops;
	return 0;
}

void rocemu_loop_local_free(struct rocemu_loop_local *l)
{
	free(l->endpoints);
	free(l->fill.e);
	free(l->fill.data);
	free(l->drain.e);
	free(l->drain.data);
	memset(l, 0, sizeof(*l));
}
