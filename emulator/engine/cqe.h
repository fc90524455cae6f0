/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The CQE writer: requester, responder and error CQEs in mlx5 format
 * (owner bit last, with release), and completion events for armed CQs
 * into the completion channel's pipe: one per arm, for a CQE no event
 * reported before.
 */
#ifndef ROCEMU_EMULATOR_CQE_H
#define ROCEMU_EMULATOR_CQE_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

struct rocemu_cq;

/* One completion, whatever its kind (op MLX5_CQE_*). */
struct rocemu_cqe_info {
	uint8_t op;			/* MLX5_CQE_REQ, _RESP_*, _REQ_ERR, _RESP_ERR */
	uint8_t syndrome;		/* error CQEs: MLX5_CQE_SYNDROME_* */
	uint8_t wqe_opcode;		/* requester CQEs: MLX5_OPCODE_* of the WQE */
	uint32_t qpn;
	uint16_t wqe_counter;
	uint32_t byte_cnt;
	__be32 imm;			/* responder: as on the wire */
	uint32_t src_qp;
	uint32_t srqn;			/* receive from an SRQ: its number, else 0 */
	uint8_t l3_hdr_type;		/* UD receive: MLX5_CQE_L3_HDR_TYPE_* of its GRH (and its SL) */
	bool solicited;
	const uint8_t *scatter;		/* data carried in the CQE (cqe_scatter.h), or NULL */
	uint32_t scatter_len;		/* its bytes: at most half the CQE */
};

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

#endif /* ROCEMU_EMULATOR_CQE_H */
