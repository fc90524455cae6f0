/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The mlx5 ring format's reading half (ring/format.h's table points here):
 * mlx5 send WQEs (ctrl, raddr, data or inline segments, a RAW_PACKET
 * WQE's Ethernet segment with its inline header, wrapping past the ring's
 * end) and receive WQEs into the neutral records, and the doorbell
 * records. The ring stays the application's memory: everything is copied
 * out and checked before use.
 */
#ifndef ROCEMU_EMULATOR_MLX5_WQE_H
#define ROCEMU_EMULATOR_MLX5_WQE_H

#include <stdbool.h>
#include <stdint.h>

#include "emulator/ring/format.h"

struct rocemu_qp;
struct rocemu_srq;

/*
 * Parse the send WQE whose ctrl segment is at BB counter bb, of the
 * posted BBs from there on (at least 1): its data segments are inline
 * ones, then pointers, as ConnectX gathers them in order (UCX puts a
 * header inline before its data pointers); an inline segment after a
 * pointer is not emulated. Returns 0, -EINVAL for a malformed WQE (size
 * 0 or past the posted BBs, opcode, QPN, inline length, inline after a
 * pointer, an Ethernet segment's inline header past the WQE) or -EOPNOTSUPP for an opcode not implemented. Either way
 * w->bbs is the step to the next WQE, 1 to posted: its size, or one BB
 * past a ctrl whose size is broken.
 */
int rocemu_wqe_parse_send(const struct rocemu_qp *qp, uint32_t bb, uint32_t posted,
			  struct rocemu_send_wqe *w);
/*
 * A DCI's send WQE at bb, its first BB only: the datagram segment (the
 * DCT's address vector, number and key) and ctrl's DCI stream.
 */
void rocemu_wqe_peek_dc(const struct rocemu_qp *qp, uint32_t bb, struct rocemu_send_dest *dest,
			uint16_t *stream);
/* Parse receive WQE number counter of a QP's or WQ's RQ. Returns 0 (no failure is possible). */
int rocemu_wqe_parse_recv(const struct rocemu_rq_ring *rq, uint32_t counter,
			  struct rocemu_recv_wqe *w);

/*
 * Parse SRQ WQE index (counter: the index); returns the index its
 * next_wqe_index links to, masked into the ring.
 */
uint16_t rocemu_wqe_parse_srq(const struct rocemu_srq *srq, uint16_t index,
			      struct rocemu_recv_wqe *w);
/* The 16-bit producer counters of the doorbell record (acquire: WQEs are complete). */
uint16_t rocemu_wqe_sq_doorbell(const struct rocemu_qp *qp);
/*
 * What the doorbell record says is posted past a consumer: send BBs past
 * BB counter bb, receive WQEs past counter, SRQ WQEs past those taken;
 * 0 for a queue without a ring. -EINVAL when it says more than the ring
 * holds, which no poster can ring: every loop over the ring stops within
 * its size whatever the application wrote.
 */
int rocemu_wqe_sq_posted(const struct rocemu_qp *qp, uint32_t bb);
int rocemu_wqe_rq_posted(const struct rocemu_rq_ring *rq, uint32_t counter);
int rocemu_wqe_srq_posted(const struct rocemu_srq *srq, uint32_t taken);
/*
 * Whether the page of qp's doorbell record exists (mincore): until someone
 * writes it, its counters are 0, and the daemon reads them without
 * allocating the page (a QP that never posts costs no ring memory here).
 */
bool rocemu_wqe_doorbell_written(const struct rocemu_qp *qp);
/* Whether a program posting on its own (direct.c) changed the doorbell record since the last look. */
bool rocemu_wqe_direct_rung(struct rocemu_qp *qp);
/* Zero the doorbell record (QP reset, as mlx5 does). */
void rocemu_wqe_doorbell_reset(struct rocemu_qp *qp);

#endif /* ROCEMU_EMULATOR_MLX5_WQE_H */
