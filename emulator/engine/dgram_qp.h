/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The completions and errors of a QP that completes each WQE as it is
 * fetched and keeps no responder state (UD, RAW_PACKET): nothing is
 * acknowledged, so an error CQE moves the QP to ERR at once, and its
 * transport's flush op completes what is left.
 */
#ifndef ROCEMU_EMULATOR_DGRAM_QP_H
#define ROCEMU_EMULATOR_DGRAM_QP_H

#include <stdint.h>
#include <infiniband/verbs.h>

struct rocemu_qp;
struct rocemu_send_wqe;

/* A send WQE completed (IBV_WC_SUCCESS) or failed (its status: the QP goes to ERR). */
void rocemu_dgram_complete_send(struct rocemu_qp *qp, const struct rocemu_send_wqe *w,
				enum ibv_wc_status status);
/* The receive side found an error for the WQE it consumed: error CQE, QP to ERR. */
void rocemu_dgram_recv_fail(struct rocemu_qp *qp, uint32_t counter, enum ibv_wc_status status);
/* A work queue is broken (a doorbell past its ring): QP to ERR, IBV_EVENT_QP_FATAL. */
void rocemu_dgram_qp_fatal(struct rocemu_qp *qp);
/*
 * Complete every WQE posted and not yet taken with WR_FLUSH_ERR: the SQ's
 * from BB *sq_bb, the RQ's from counter *rq_ci, both advanced past them.
 * An SRQ's WQEs belong to no QP until taken: none to flush.
 */
void rocemu_dgram_flush(struct rocemu_qp *qp, uint32_t *sq_bb, uint32_t *rq_ci);

#endif /* ROCEMU_EMULATOR_DGRAM_QP_H */
