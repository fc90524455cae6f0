/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Multicast groups of a device (mcast.h): attach and detach by MGID, the
 * group socket opened with the first QP and closed with the last, and the
 * fan-out of a received datagram to the QPs attached.
 */
#include "emulator/engine/mcast.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "emulator/core/emu.h"
#include "emulator/engine/rx.h"
#include "emulator/obj/qp.h"
#include "net/roce/roce_hdr.h"
#include "net/udp/udp_port.h"
#include "rocemu/log.h"

static const uint8_t ipv4_mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

static void mcast_rx(void *arg, int fd, const struct rocemu_dgram *d)
{
	struct rocemu_mcast_group *g = arg;

	(void)fd;
	rocemu_rx_datagram_to(g->dev, g->addr, d);
}

/* The IPv4 group of an MGID (rdma_gid2ip), 0 unless it is an IPv4-mapped multicast address. */
static uint32_t mgid_group(const uint8_t *mgid)
{
	uint32_t addr;

	if (memcmp(mgid, ipv4_mapped_prefix, sizeof(ipv4_mapped_prefix)))
		return 0;
	memcpy(&addr, mgid + 12, sizeof(addr));
	return IN_MULTICAST(ntohl(addr)) ? addr : 0;
}

static struct rocemu_mcast_group *group_find(struct rocemu_device *dev, uint32_t addr)
{
	for (unsigned int i = 0; i < ROCEMU_MAX_MCAST_GRP; i++)
		if (dev->mcast[i].addr == addr)
			return &dev->mcast[i];
	return NULL;
}

static int qp_index(const struct rocemu_mcast_group *g, uint32_t qpn)
{
	for (unsigned int i = 0; i < g->num_qps; i++)
		if (g->qpns[i] == qpn)
			return (int)i;
	return -1;
}

/* A UD QP of c and the group its MGID names; -EINVAL for anything else. */
static int request_check(struct rocemu_client *c, const struct rocemu_mcast_req *req,
			 struct rocemu_qp **qp, uint32_t *addr)
{
	*qp = rocemu_qp_lookup(c, req->qpn);
	*addr = mgid_group(req->mgid);
	return *qp && (*qp)->type == IBV_QPT_UD && *addr ? 0 : -EINVAL;
}

int rocemu_mcast_attach(struct rocemu_client *c, const struct rocemu_mcast_req *req)
{
	struct rocemu_device *dev = c->dev;
	struct rocemu_mcast_group *g;
	char text[INET_ADDRSTRLEN];
	struct rocemu_qp *qp;
	uint32_t addr;
	int err, fd;

	err = request_check(c, req, &qp, &addr);
	if (err)
		return err;
	g = group_find(dev, addr);
	if (g && qp_index(g, qp->qpn) >= 0)
		return 0;
	if (g && g->num_qps == ROCEMU_MAX_MCAST_QP_ATTACH)
		return -ENOMEM;
	if (!g) {
		g = group_find(dev, 0);
		if (!g)
			return -ENOMEM;
		fd = rocemu_udp_group_open(addr, dev->ipv4);
		if (fd < 0)
			return fd;
		err = rocemu_loop_add_udp(dev->emu->loop, fd, mcast_rx, g);
		if (err) {
			close(fd);
			return err;
		}
		*g = (struct rocemu_mcast_group){ .dev = dev, .addr = addr, .fd = fd };
	}
	g->qpns[g->num_qps++] = qp->qpn;
	rocemu_log(ROCEMU_LOG_INFO, "%s qp 0x%06x attach %s", dev->name, qp->qpn,
		   inet_ntop(AF_INET, &addr, text, sizeof(text)));
	return 0;
}

static void group_leave(struct rocemu_mcast_group *g, unsigned int i)
{
	g->qpns[i] = g->qpns[--g->num_qps];
	if (g->num_qps)
		return;
	rocemu_loop_remove_udp(g->dev->emu->loop, g->fd);
	close(g->fd);
	g->addr = 0;
}

int rocemu_mcast_detach(struct rocemu_client *c, const struct rocemu_mcast_req *req)
{
	struct rocemu_mcast_group *g;
	struct rocemu_qp *qp;
	uint32_t addr;
	int err, i;

	err = request_check(c, req, &qp, &addr);
	if (err)
		return err;
	g = group_find(c->dev, addr);
	i = g ? qp_index(g, qp->qpn) : -1;
	if (i < 0)
		return -EINVAL;
	rocemu_log(ROCEMU_LOG_INFO, "%s qp 0x%06x detach", c->dev->name, qp->qpn);
	group_leave(g, (unsigned int)i);
	return 0;
}

bool rocemu_mcast_qp_attached(const struct rocemu_qp *qp)
{
	const struct rocemu_device *dev = qp->owner->dev;

	for (unsigned int i = 0; i < ROCEMU_MAX_MCAST_GRP; i++)
		if (dev->mcast[i].addr && qp_index(&dev->mcast[i], qp->qpn) >= 0)
			return true;
	return false;
}

void rocemu_mcast_detach_all(struct rocemu_qp *qp)
{
	struct rocemu_device *dev = qp->owner->dev;
	int i;

	for (unsigned int j = 0; j < ROCEMU_MAX_MCAST_GRP; j++)
		if (dev->mcast[j].addr && (i = qp_index(&dev->mcast[j], qp->qpn)) >= 0)
			group_leave(&dev->mcast[j], (unsigned int)i);
}

/* IBV_QP_CREATE_BLOCK_SELF_MCAST_LB: a QP does not hear its own sends to the group. */
static bool own_loopback_blocked(const struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	const uint8_t *deth = pkt->bth + pkt->info->offset[ROCEMU_HDR_DETH];

	return (qp->create_flags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB) &&
	       pkt->saddr == qp->owner->dev->ipv4 && rocemu_deth_src_qp(deth) == qp->source_qpn;
}

void rocemu_mcast_rx(struct rocemu_device *dev, const struct rocemu_pkt *pkt)
{
	struct rocemu_mcast_group *g = group_find(dev, pkt->daddr);

	if (!g) {
		dev->rx_dropped++;
		return;
	}
	for (unsigned int i = 0; i < g->num_qps; i++) {
		struct rocemu_qp *qp = rocemu_idtable_get(&dev->emu->qps, g->qpns[i]);

		if (qp && !own_loopback_blocked(qp, pkt))
			qp->ops->rx(qp, pkt);
	}
}

void rocemu_mcast_close_all(struct rocemu_device *dev)
{
	for (unsigned int i = 0; i < ROCEMU_MAX_MCAST_GRP; i++) {
		if (!dev->mcast[i].addr)
			continue;
		rocemu_loop_remove_udp(dev->emu->loop, dev->mcast[i].fd);
		close(dev->mcast[i].fd);
		dev->mcast[i].addr = 0;
	}
}
