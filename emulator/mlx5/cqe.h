/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The mlx5 ring format's writing half (ring/format.h's table points
 * here): requester, responder and error CQEs in mlx5 format (owner bit
 * last, with release) from the neutral completion record; completion
 * events for armed CQs come from cqev/cq_event.c, read from mlx5's arm word.
 */
#ifndef ROCEMU_EMULATOR_MLX5_CQE_H
#define ROCEMU_EMULATOR_MLX5_CQE_H

#include <stdbool.h>
#include <stdint.h>

#include "emulator/ring/format.h"

struct rocemu_cq;

/*
 * Write one CQE at the producer index and raise an event if the CQ is armed
 * for it. False when the CQ is in error (overrun): the CQE is lost.
 */
bool rocemu_cqe_write(struct rocemu_cq *cq, const struct rocemu_cqe_info *info);

/*
 * A new ring of ncqe entries of cqe_size whose first written entries are
 * those before pi: make the entry at pi invalid. Returns how many entries
 * after it are untouched zeros, which rocemu_cqe_write makes invalid one
 * at a time ahead of itself.
 */
uint32_t rocemu_cqe_ring_start(void *ring, uint32_t cqe_size, uint32_t ncqe, uint32_t pi,
			       uint32_t written);

/*
 * Resizing: copy cq's unpolled CQEs, consumer index and arm word into a new
 * ring of to_ncqe entries (doorbell record at to_dbrec), at the same
 * indices, and start it (rocemu_cqe_ring_start): its untouched entries, or
 * -EINVAL when the CQEs do not fit.
 */
int rocemu_cqe_ring_move(const struct rocemu_cq *cq, void *to, uint32_t to_ncqe, void *to_dbrec);

/*
 * The shim armed cq (or it may have): fire now if CQEs at or past the
 * arm's consumer index were written since the last event (for a solicited
 * arm, a solicited or error one among them), as a ConnectX does.
 */
void rocemu_cqe_arm_check(struct rocemu_cq *cq);

/* Whether mlx5 has CQEs of size bytes: 64 or 128. */
bool rocemu_cqe_size_valid(uint32_t size);

#endif /* ROCEMU_EMULATOR_MLX5_CQE_H */
