/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The UD transport of one QP: datagrams of at most the port MTU, each
 * addressed by the AV its send WQE carries (ud_send.c), received into the
 * next receive WQE, of its SRQ or its RQ, behind a 40-byte GRH after the
 * Q_Key check (ud_recv.c); no PSN sequence, no ACK, no retry (ud_qp.c: ops, errors,
 * flush). Everything runs on the daemon's one loop.
 */
#ifndef ROCEMU_EMULATOR_UD_H
#define ROCEMU_EMULATOR_UD_H

#include <stdint.h>
#include <infiniband/verbs.h>

struct rocemu_pkt;
struct rocemu_qp;
struct rocemu_send_wqe;

struct rocemu_ud {
	uint32_t sq_bb;			/* next BB to fetch from the SQ ring */
	uint32_t rq_ci;			/* next receive WQE counter of the RQ (none with an SRQ) */
	uint32_t psn;			/* PSN of the next datagram (IBTA 9.7.2: any, ignored) */
};

/* ---- ud_send.c ---- */
/* Send every WQE posted (RTS): one datagram each. */
void rocemu_ud_send_run(struct rocemu_qp *qp);

/* ---- ud_recv.c ---- */
/* One datagram for qp: Q_Key, receive WQE, GRH and payload, CQE. */
void rocemu_ud_recv(struct rocemu_qp *qp, const struct rocemu_pkt *pkt);

#endif /* ROCEMU_EMULATOR_UD_H */
