/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Multicast groups of one device: UD QPs attached by MGID, the group's
 * IPv4 address taken from the IPv4-mapped MGID as RoCEv2 maps it
 * (::ffff:239.1.2.3 is 239.1.2.3, the kernel's rdma_gid2ip); one socket
 * per group joined on the device's address, each datagram handed once to
 * every QP attached (by the receive path, rx.c) (a second attach of the same QP is a no-op, as uverbs
 * does). Each QP counts the groups it is in (ibv_destroy_qp fails with
 * EBUSY while it is in any).
 */
#ifndef ROCEMU_EMULATOR_MCAST_H
#define ROCEMU_EMULATOR_MCAST_H

#include <stdint.h>

/* The destination QPN of every multicast packet (IBTA 10.5.2.2). */
#define ROCEMU_MCAST_QPN 0xffffffu

struct rocemu_client;
struct rocemu_device;
struct rocemu_mcast_req;
struct rocemu_qp;

/* ibv_attach_mcast: -EINVAL for a bad QP or MGID, -ENOMEM over the limits. */
int rocemu_mcast_attach(struct rocemu_client *c, const struct rocemu_mcast_req *req);
/* ibv_detach_mcast: -EINVAL when the QP is not attached to the group. */
int rocemu_mcast_detach(struct rocemu_client *c, const struct rocemu_mcast_req *req);
/* Detach qp from every group (its owner is gone). */
void rocemu_mcast_detach_all(struct rocemu_qp *qp);
/* Close every group socket of dev. */
void rocemu_mcast_close_all(struct rocemu_device *dev);

#endif /* ROCEMU_EMULATOR_MCAST_H */
