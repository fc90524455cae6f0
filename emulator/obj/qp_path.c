/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/obj/qp_path.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "emulator/core/sport.h"
#include "emulator/obj/qp.h"
#include "net/udp/udp_port.h"
#include "rocemu/log.h"

void rocemu_path_release(struct rocemu_device *dev, struct rocemu_qp_path *path)
{
	if (path->holds_sport)
		rocemu_sport_put(dev, ntohs(path->flow.sport));
	path->holds_sport = false;
}

void rocemu_qp_path_release(struct rocemu_qp *qp)
{
	rocemu_path_release(qp->owner->dev, &qp->path);
}

/*
 * RoCE: the peer is GID ::ffff:a.b.c.d of the AV (IPv4-mapped), port 4791;
 * the source port comes from the QPN pair, as a ConnectX picks it.
 */
void rocemu_qp_path_set(struct rocemu_qp *qp)
{
	uint32_t daddr;

	memcpy(&daddr, qp->attr.ah_attr.grh.dgid.raw + 12, sizeof(daddr));
	rocemu_qp_path_to(qp, daddr, qp->attr.dest_qp_num);
}

void rocemu_qp_path_to(struct rocemu_qp *qp, uint32_t daddr, uint32_t dest_qpn)
{
	struct rocemu_device *dev = qp->owner->dev;
	uint16_t sport;

	rocemu_qp_path_release(qp);
	qp->path.tx_fd = rocemu_sport_get(dev, qp->qpn, dest_qpn, &sport);
	qp->path.holds_sport = true;
	qp->path.flow = (struct rocemu_ipv4_udp){ .saddr = dev->ipv4, .daddr = daddr,
						  .sport = htons(sport),
						  .dport = htons(ROCEMU_ROCEV2_PORT) };
	qp->path.mtu = rocemu_mtu_bytes(qp->attr.path_mtu);
	if (!qp->path.mtu)
		qp->path.mtu = 256;
}

/* Send from port from now on (sport.c falls back to 4791 when it cannot be had). */
static void path_use_sport(struct rocemu_qp *qp, uint16_t port)
{
	uint16_t sport;

	rocemu_qp_path_release(qp);
	qp->path.tx_fd = rocemu_sport_get_port(qp->owner->dev, port, qp->qpn, &sport);
	qp->path.holds_sport = true;
	qp->path.flow.sport = htons(sport);
}

int rocemu_qp_set_udp_sport(struct rocemu_client *c, const struct rocemu_qp_udp_sport_req *req)
{
	struct rocemu_qp *qp = rocemu_qp_lookup(c, req->qpn);

	if (!qp)
		return -EINVAL;
	/* mlx5: an RTS2RTS of the primary path, offered for RC and UC only. */
	if (qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC)
		return -EOPNOTSUPP;
	/* The firmware's bad QP state (the shim saw RTS, the QP has left it); no port 0 on the wire. */
	if (qp->attr.qp_state != IBV_QPS_RTS || !req->udp_sport)
		return -EINVAL;
	path_use_sport(qp, req->udp_sport);
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x UDP source port %u", c->dev->name, qp->qpn,
		   ntohs(qp->path.flow.sport));
	return 0;
}
