/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/qp_path.h"

#include <arpa/inet.h>
#include <string.h>

#include "emulator/qp.h"
#include "emulator/sport.h"
#include "net/udp_port.h"

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
