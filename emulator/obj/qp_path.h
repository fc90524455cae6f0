/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The path of a connected QP (RC today, UC and XRC later): where its
 * packets go, from which UDP source port, and at which MTU, all taken from
 * the attributes at INIT->RTR. Any transport with one peer uses it as is.
 */
#ifndef ROCEMU_EMULATOR_QP_PATH_H
#define ROCEMU_EMULATOR_QP_PATH_H

#include <stdbool.h>
#include <stdint.h>

#include "net/roce/icrc.h"

struct rocemu_device;
struct rocemu_qp;

struct rocemu_qp_path {
	struct rocemu_ipv4_udp flow;	/* from the AV at RTR: where we send, ICRC input */
	int tx_fd;			/* socket of flow's source port (sport.c) */
	bool holds_sport;		/* tx_fd is a reference to give back */
	uint32_t mtu;			/* path MTU in bytes */
};

/* Point qp's path at the peer of its AV and path MTU (giving back an earlier port). */
void rocemu_qp_path_set(struct rocemu_qp *qp);
/* Point qp's path at IPv4 address daddr and its QP dest_qpn (a DC QP's peer of the moment). */
void rocemu_qp_path_to(struct rocemu_qp *qp, uint32_t daddr, uint32_t dest_qpn);
/* Give back the source port, if held (reset, destroy). */
void rocemu_qp_path_release(struct rocemu_qp *qp);
/* Give back the source port path of dev holds, if any (a path kept aside, DC). */
void rocemu_path_release(struct rocemu_device *dev, struct rocemu_qp_path *path);

#endif /* ROCEMU_EMULATOR_QP_PATH_H */
