/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Addresses, routes and QP attributes of RDMA CM ids, as the kernel's
 * cma.c and cm.c give them on a RoCE port: an IPv4 address picks the
 * device that has it, a loopback address no device has binds like the
 * wildcard (cma_any_addr); a destination of this daemon is reached from itself
 * (the kernel's loopback rule), any other through the source address the
 * host's routing table picks; the path is the port's (MTU, P_Key 0xffff,
 * GIDs ::ffff:a.b.c.d at index 0); rdma_init_qp_attr returns what
 * ib_cm_init_qp_attr does for each state and QP type (RC, UC, XRC
 * initiator and target).
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <rdma/rdma_cma.h>
#include <unistd.h>

#include "emulator/cm/cm.h"
#include "emulator/core/emu.h"
#include "net/udp/udp_port.h"

#define EPHEMERAL_FIRST 32768	/* Linux's ip_local_port_range */
#define EPHEMERAL_LAST 60999
#define ROCE_GID_INDEX 0	/* the GID ::ffff:<device address>, RoCE v2 */
#define ROCE_HOP_LIMIT 64
#define PATH_SELECTOR_EXACTLY 2

/*
 * Whether (ps, port) on dev (NULL: every device) is taken for id (a
 * request's ids share their listener's port).
 */
static bool port_taken(const struct rocemu_cm_id *id, const struct rocemu_device *dev,
		       uint16_t port)
{
	const struct rocemu_list *n;

	for (n = id->emu->cm_ids_all.next; n != &id->emu->cm_ids_all; n = n->next) {
		const struct rocemu_cm_id *o = rocemu_container_of(n, struct rocemu_cm_id, emu_node);

		if (o == id || o->passive || o->state == CMA_IDLE || o->ps != id->ps ||
		    o->src.sin_port != htons(port))
			continue;
		if (o->dev && dev && o->dev != dev)
			continue;
		if (id->reuseaddr && o->reuseaddr && o->state != CMA_LISTEN)
			continue;
		return true;
	}
	return false;
}

/* Whether addr is an address of this host (network namespace): it can be bound. */
static bool host_has_addr(uint32_t addr)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = addr };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool local;

	if (fd < 0)
		return false;
	local = !bind(fd, (struct sockaddr *)&sin, sizeof(sin));
	close(fd);
	return local;
}

/*
 * The device a bind to ip picks, NULL for the wildcard: INADDR_ANY, or a
 * loopback address no device has (the kernel's cma_any_addr counts
 * loopback as any). -ENODEV: a host address of no device (no GID has
 * it); -EADDRNOTAVAIL: not an address of this host (rdma_translate_ip).
 */
static int bind_device(struct rocemu_emu *emu, uint32_t ip, struct rocemu_device **dev)
{
	*dev = NULL;
	if (ip == htonl(INADDR_ANY) || (*dev = rocemu_emu_device_by_ipv4(emu, ip)) != NULL ||
	    ntohl(ip) >> IN_CLASSA_NSHIFT == IN_LOOPBACKNET)
		return 0;
	return host_has_addr(ip) ? -ENODEV : -EADDRNOTAVAIL;
}

int cm_bind(struct rocemu_cm_id *id, const struct sockaddr_in *addr)
{
	uint32_t ip = addr->sin_addr.s_addr;
	struct rocemu_device *dev;
	uint16_t port = ntohs(addr->sin_port);
	unsigned int span = EPHEMERAL_LAST - EPHEMERAL_FIRST + 1, i;
	int err = bind_device(id->emu, ip, &dev);

	if (err)
		return err;
	if (port && port_taken(id, dev, port))
		return -EADDRINUSE;
	/* An ephemeral port: the first free one after a start that moves with the handle. */
	for (i = 0; !port && i < span; i++) {
		uint16_t p = (uint16_t)(EPHEMERAL_FIRST + (id->handle * 7919u + i) % span);

		if (!port_taken(id, dev, p))
			port = p;
	}
	if (!port)
		return -EADDRNOTAVAIL;
	id->dev = dev;
	id->src.sin_addr.s_addr = ip;
	id->src.sin_port = htons(port);
	id->state = CMA_ADDR_BOUND;
	return 0;
}

/* The source address the host routes to dst from (network order), or 0. */
static uint32_t route_source(uint32_t dst)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(ROCEMU_ROCEV2_PORT),
				  .sin_addr.s_addr = dst }, from;
	socklen_t len = sizeof(from);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint32_t src = 0;

	if (fd < 0)
		return 0;
	if (!connect(fd, (struct sockaddr *)&to, sizeof(to)) &&
	    !getsockname(fd, (struct sockaddr *)&from, &len))
		src = from.sin_addr.s_addr;
	close(fd);
	return src;
}

int cm_resolve_addr(struct rocemu_cm_id *id, const struct sockaddr_in *dst)
{
	struct rocemu_device *dev = id->dev;

	if (!dst->sin_addr.s_addr)
		return -EADDRNOTAVAIL;
	/* A local destination is its own source (the kernel's cma_resolve_loopback). */
	if (!dev && (dev = rocemu_emu_device_by_ipv4(id->emu, dst->sin_addr.s_addr)) == NULL)
		dev = rocemu_emu_device_by_ipv4(id->emu, route_source(dst->sin_addr.s_addr));
	if (!dev)
		return -ENODEV;
	id->dev = dev;
	id->src.sin_addr.s_addr = dev->ipv4;
	id->dst = *dst;
	return 0;
}

static void gid_of(uint8_t gid[16], uint32_t addr)
{
	memset(gid, 0, 16);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(&gid[12], &addr, sizeof(addr));
}

/* Whether id has a path: resolved, or made by a request. */
static bool has_route(const struct rocemu_cm_id *id)
{
	return id->dev && (id->state == CMA_ROUTE_RESOLVED || id->state == CMA_CONNECT ||
			   id->state == CMA_DISCONNECT);
}

void cm_query_route(const struct rocemu_cm_id *id, struct ucma_abi_query_route_resp *resp)
{
	struct ib_user_path_rec *path = &resp->ib_route[0];

	memcpy(&resp->src_addr, &id->src, sizeof(id->src));
	memcpy(&resp->dst_addr, &id->dst, sizeof(id->dst));
	if (!id->dev)
		return;
	resp->node_guid = id->dev->node_guid;
	resp->port_num = ROCEMU_PORT_NUM;
	resp->ibdev_index = id->dev->index;
	gid_of(path->sgid, id->src.sin_addr.s_addr);
	gid_of(path->dgid, id->dst.sin_addr.s_addr);
	path->pkey = htons(CM_PKEY_DEFAULT);
	if (!has_route(id))
		return;
	resp->num_paths = 1;
	path->reversible = 1;
	path->numb_path = 1;
	path->mtu = id->mtu ? id->mtu : id->dev->active_mtu;
	path->mtu_selector = PATH_SELECTOR_EXACTLY;
	path->rate_selector = PATH_SELECTOR_EXACTLY;
	path->hop_limit = ROCE_HOP_LIMIT;
	path->traffic_class = id->tos;
	path->packet_life_time_selector = PATH_SELECTOR_EXACTLY;
	path->packet_life_time = CMA_IBOE_PACKET_LIFETIME;
}

/* The CM states where the QP may take each state's attributes (the kernel's cm_init_qp_*_attr). */
static bool cm_allows(enum cm_state cm, uint32_t qp_state)
{
	switch (cm) {
	case CM_REQ_SENT:
		return qp_state == IBV_QPS_INIT;
	case CM_REQ_RCVD:
	case CM_REP_SENT:
	case CM_REP_RCVD:
	case CM_ESTABLISHED:
		return qp_state == IBV_QPS_INIT || qp_state == IBV_QPS_RTR ||
		       qp_state == IBV_QPS_RTS;
	default:
		return false;
	}
}

void cm_fill_ah(const struct rocemu_cm_id *id, struct ib_uverbs_ah_attr *ah)
{
	ah->is_global = 1;
	ah->port_num = ROCEMU_PORT_NUM;
	gid_of(ah->grh.dgid, id->dst.sin_addr.s_addr);
	ah->grh.sgid_index = ROCE_GID_INDEX;
	ah->grh.hop_limit = ROCE_HOP_LIMIT;
	ah->grh.traffic_class = id->tos;
}

int cm_init_qp_attr(struct rocemu_cm_id *id, uint32_t qp_state, struct ib_uverbs_qp_attr *a)
{
	a->qp_state = qp_state;
	a->port_num = ROCEMU_PORT_NUM;
	if (!id->dev)
		return -EINVAL;
	/* UD ids and ids not yet connecting: what cma_ib_init_qp_attr gives. */
	if (id->qp_type == IBV_QPT_UD || id->cm == CM_IDLE) {
		a->qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (id->qp_type == IBV_QPT_UD) {
			/* cma_set_default_qkey: the UDP port space's, kept for the SIDR REP to match. */
			if (!id->qkey)
				id->qkey = RDMA_UDP_QKEY;
			a->qkey = id->qkey;
			a->qp_attr_mask |= IBV_QP_QKEY;
		} else {
			a->qp_access_flags = 0;
			a->qp_attr_mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	}
	if (!cm_allows(id->cm, qp_state))
		return -EINVAL;
	switch (qp_state) {
	case IBV_QPS_INIT:
		a->qp_attr_mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (id->responder_resources)
			a->qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		return 0;
	case IBV_QPS_RTR:
		a->qp_attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN;
		cm_fill_ah(id, &a->ah_attr);
		a->path_mtu = id->mtu;
		a->dest_qp_num = id->remote_qpn;
		a->rq_psn = id->rq_psn;
		/* A responder's RDMA depth: RC and XRC targets (cm_init_qp_rtr_attr). */
		if (id->qp_type == IBV_QPT_RC || id->qp_type == IBV_QPT_XRC_RECV) {
			a->qp_attr_mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
			a->max_dest_rd_atomic = id->responder_resources;
			a->min_rnr_timer = 0;
		}
		return 0;
	default:		/* RTS: what each type's requester or responder needs (cm_init_qp_rts_attr) */
		a->qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		a->sq_psn = id->sq_psn;
		if (id->qp_type == IBV_QPT_RC || id->qp_type == IBV_QPT_XRC_SEND) {
			a->qp_attr_mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					   IBV_QP_MAX_QP_RD_ATOMIC;
			a->retry_cnt = id->retry_count;
			a->rnr_retry = id->rnr_retry_count;
			a->max_rd_atomic = id->initiator_depth;
		}
		if (id->qp_type != IBV_QPT_UC) {
			a->qp_attr_mask |= IBV_QP_TIMEOUT;
			a->timeout = id->ack_timeout ? id->ack_timeout : id->timeout;
		}
		return 0;
	}
}

struct rocemu_cm_id *cm_find_listener(struct rocemu_emu *emu, struct rocemu_device *dev,
				      uint16_t ps, uint16_t port, uint32_t addr)
{
	struct rocemu_cm_id *wildcard = NULL;
	struct rocemu_list *n;

	for (n = emu->cm_ids_all.next; n != &emu->cm_ids_all; n = n->next) {
		struct rocemu_cm_id *id = rocemu_container_of(n, struct rocemu_cm_id, emu_node);

		if (id->state != CMA_LISTEN || id->ps != ps || id->src.sin_port != htons(port))
			continue;
		if (id->dev == dev && id->src.sin_addr.s_addr == addr)
			return id;
		if (!id->dev && !wildcard)
			wildcard = id;
	}
	return wildcard;
}

bool cm_port_listened(struct rocemu_emu *emu, struct rocemu_device *dev, uint16_t ps,
		      uint16_t port)
{
	struct rocemu_list *n;

	for (n = emu->cm_ids_all.next; n != &emu->cm_ids_all; n = n->next) {
		struct rocemu_cm_id *id = rocemu_container_of(n, struct rocemu_cm_id, emu_node);

		if (id->state == CMA_LISTEN && id->ps == ps && id->src.sin_port == htons(port) &&
		    (!id->dev || id->dev == dev))
			return true;
	}
	return false;
}
