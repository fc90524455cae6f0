/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Responder atomics (IBTA 9.4.5): CMP_AND_SWAP and FETCH_AND_ADD on 8
 * aligned bytes of a client's MR, and the replay cache that answers a
 * duplicate request with the original value instead of executing it
 * again (IBTA 9.7.5.1.3 / C9-140). The daemon runs on one thread, so an
 * atomic is atomic with respect to every other atomic on the device.
 */
#ifndef ROCEMU_EMULATOR_RESP_ATOMIC_H
#define ROCEMU_EMULATOR_RESP_ATOMIC_H

#include <stdbool.h>
#include <stdint.h>

struct rocemu_qp;
struct rocemu_rc_resp;

/* Replay cache depth: the largest max_dest_rd_atomic the device grants. */
#define ROCEMU_ATOMIC_REPLAY_MAX 16

struct rocemu_atomic_replay {
	uint32_t psn;
	bool valid;
	uint64_t orig;
};

/*
 * Execute the atomic of AtomicETH atmeth for target QP qp (cmp_swap:
 * compare and swap, else fetch and add). *orig is the value before.
 * Returns 0, -EINVAL for a VA not 8-byte aligned, the rocemu_dma_rkey
 * codes for the key, or the rocemu_dma_copy codes when the memory could
 * not be reached (-ESRCH: the owner process is gone).
 */
int rocemu_atomic_execute(const struct rocemu_qp *qp, const uint8_t *atmeth, bool cmp_swap,
			  uint64_t *orig);

/* Remember the result of the atomic at psn (the oldest of depth entries goes); resp->mem exists. */
void rocemu_atomic_replay_save(struct rocemu_rc_resp *resp, uint32_t depth, uint32_t psn,
			       uint64_t orig);
/* The original value of an executed atomic at psn; false if not cached. */
bool rocemu_atomic_replay_find(const struct rocemu_rc_resp *resp, uint32_t psn, uint64_t *orig);

#endif /* ROCEMU_EMULATOR_RESP_ATOMIC_H */
