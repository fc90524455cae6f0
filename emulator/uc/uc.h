/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The UC transport (IBTA 9.8.3): SEND and RDMA WRITE, with and without
 * immediate, and nothing acknowledged. It shares RC's per-QP state
 * (struct rocemu_rc), its life (rc_qp.c: modify, reset, flush, errors, the
 * CQE writer) and its segmenter (rc_tx.c); its requester (uc_req.c) and
 * responder (uc_resp.c) are its own, and uc_qp.c holds its ops.
 */
#ifndef ROCEMU_EMULATOR_UC_H
#define ROCEMU_EMULATOR_UC_H

struct rocemu_qp;
struct rocemu_pkt;

/* Packets the requester sends per turn of the loop: no ACK paces UC, the peer must keep up. */
#define ROCEMU_UC_BURST 64u

/* ---- uc_req.c: send the SQ, each WQE complete once its last packet left ---- */
void rocemu_uc_req_run(struct rocemu_qp *qp);

/* ---- uc_resp.c: one request packet for qp ---- */
void rocemu_uc_resp_packet(struct rocemu_qp *qp, const struct rocemu_pkt *pkt);

#endif /* ROCEMU_EMULATOR_UC_H */
