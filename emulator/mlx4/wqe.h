/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The mlx4 ring format's reading half (ring/format.h's table points here):
 * a ConnectX-3's send WQEs, one stride of 1 << sq_wqe_shift bytes each,
 * posted by their owner bit (include/rocemu/ring_mlx4.h), into the neutral
 * record; the send doorbells of a program posting on its own. Receive and
 * SRQ WQEs and the doorbell records are mlx5's byte for byte and read by
 * mlx5/wqe.c. Everything is copied out of the program's memory and
 * checked before use.
 */
#ifndef ROCEMU_EMULATOR_MLX4_WQE_H
#define ROCEMU_EMULATOR_MLX4_WQE_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/mlx4dv.h>

#include "emulator/ring/format.h"

struct rocemu_qp;

/*
 * Send WQEs posted from WQE index bb on: those whose owner bit says this
 * pass, up to the ring's size (so never -EINVAL); 0 without an SQ.
 */
int rocemu_mlx4_sq_posted(const struct rocemu_qp *qp, uint32_t bb);
/* The 16-bit index where the WQEs posted past bb end. */
uint16_t rocemu_mlx4_sq_doorbell(const struct rocemu_qp *qp, uint32_t bb);
/*
 * Parse the send WQE at index bb (w->bbs is 1, one WQE per stride).
 * Returns 0, -EOPNOTSUPP for an opcode or QP type not emulated, or
 * -EINVAL for a malformed WQE: ds past the stride or short of the
 * opcode's segments, an inline segment past ds or across 64 bytes, more
 * SGEs than the emulator takes, a data segment with bit 31 and a length.
 */
int rocemu_mlx4_parse_send(const struct rocemu_qp *qp, uint32_t bb, uint32_t posted,
			   struct rocemu_send_wqe *w);
/* A ConnectX-3 has no DC: nothing to peek (no DCI is ever created on it). */
void rocemu_mlx4_peek_dc(const struct rocemu_qp *qp, uint32_t bb, struct rocemu_send_dest *dest,
			 uint16_t *stream);
/*
 * Zero the doorbell record and set the owner bit of every send WQE again
 * (QP reset: indices return to 0 and a WQE of the last pass must not read
 * as posted in the first).
 */
void rocemu_mlx4_doorbell_reset(struct rocemu_qp *qp);
/*
 * A program posting on its own (direct.c): whether it rang since the last
 * look, by the RQ doorbell record, the send doorbell register in the UAR
 * page (read and cleared) or the owner bit of the next send WQE.
 */
bool rocemu_mlx4_direct_rung(struct rocemu_qp *qp);

#endif /* ROCEMU_EMULATOR_MLX4_WQE_H */
