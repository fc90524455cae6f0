/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The mlx4 ring format's writing half (ring/format.h's table points
 * here): a ConnectX-3's CQEs (struct mlx4_cqe, alone in a 32-byte entry
 * or the second half of a 64-byte one) from the neutral completion record,
 * owner bit last with release; a ring whose every entry is hardware's
 * until written; its arm word decoded for the events obj/cq_event.c
 * raises as for every format.
 */
#ifndef ROCEMU_EMULATOR_MLX4_CQE_H
#define ROCEMU_EMULATOR_MLX4_CQE_H

#include <stdbool.h>
#include <stdint.h>

#include "emulator/ring/format.h"

struct rocemu_cq;

/* Write one CQE at the producer index and raise the event it owes; false when the CQ is in error. */
bool rocemu_mlx4_cqe_write(struct rocemu_cq *cq, const struct rocemu_cqe_info *info);
/* The CQ's arm word (MLX4_CQ_DB_REQ_NOT, _SOL; 0: never armed) may have changed. */
void rocemu_mlx4_cqe_arm_check(struct rocemu_cq *cq);
/* 32 or 64 bytes (a ConnectX-3 Pro with 64-byte CQEs enabled). */
bool rocemu_mlx4_cqe_size_valid(uint32_t size);
/*
 * A ring of ncqe entries whose written ones are the written before pi:
 * set the owner bit of the pass before in every other entry, as the
 * firmware leaves a new ring. Returns 0: no entry is left untouched.
 */
uint32_t rocemu_mlx4_cqe_ring_start(void *ring, uint32_t cqe_size, uint32_t ncqe, uint32_t pi,
				    uint32_t written);
/*
 * Resizing: cq's unpolled CQEs, consumer index and arm word into a new
 * ring of to_ncqe entries at the same indices, the rest started; 0, or
 * -EINVAL when they do not fit.
 */
int rocemu_mlx4_cqe_ring_move(const struct rocemu_cq *cq, void *to, uint32_t to_ncqe,
			      void *to_dbrec);

#endif /* ROCEMU_EMULATOR_MLX4_CQE_H */
