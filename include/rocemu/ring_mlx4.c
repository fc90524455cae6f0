/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The tables and the sizing rule of a ConnectX-3's shared rings
 * (ring_mlx4.h), compiled into both the shim and the daemon.
 */
#include "rocemu/ring_mlx4.h"

#include <errno.h>

#define DATA_INLINE (ROCEMU_WQE_OP_DATA | ROCEMU_WQE_OP_INLINE)

/* Completions after libmlx4's handle_good_req. */
const struct rocemu_wqe_op rocemu_mlx4_wqe_ops[256] = {
	[MLX4_OPCODE_SEND] = { "SEND", ROCEMU_WQE_OP_VALID | DATA_INLINE | ROCEMU_WQE_OP_UD,
			       IBV_WC_SEND, 0, ROCEMU_WC_LEN_NONE },
	[MLX4_OPCODE_SEND_IMM] = { "SEND_IMM", ROCEMU_WQE_OP_VALID | DATA_INLINE | ROCEMU_WQE_OP_IMM |
				   ROCEMU_WQE_OP_UD,
				   IBV_WC_SEND, IBV_WC_WITH_IMM, ROCEMU_WC_LEN_NONE },
	[MLX4_OPCODE_SEND_INVAL] = { "SEND_INVAL",
				     ROCEMU_WQE_OP_VALID | DATA_INLINE | ROCEMU_WQE_OP_INV,
				     IBV_WC_SEND, 0, ROCEMU_WC_LEN_NONE },
	[MLX4_OPCODE_RDMA_WRITE] = { "RDMA_WRITE",
				     ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_RADDR | DATA_INLINE,
				     IBV_WC_RDMA_WRITE, 0, ROCEMU_WC_LEN_NONE },
	[MLX4_OPCODE_RDMA_WRITE_IMM] = { "RDMA_WRITE_IMM",
					 ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_RADDR | DATA_INLINE |
					 ROCEMU_WQE_OP_IMM,
					 IBV_WC_RDMA_WRITE, IBV_WC_WITH_IMM, ROCEMU_WC_LEN_NONE },
	[MLX4_OPCODE_RDMA_READ] = { "RDMA_READ",
				    ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_RADDR | ROCEMU_WQE_OP_DATA |
				    ROCEMU_WQE_OP_READ,
				    IBV_WC_RDMA_READ, 0, ROCEMU_WC_LEN_CQE },
	[MLX4_OPCODE_ATOMIC_CS] = { "ATOMIC_CS",
				    ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_RADDR | ROCEMU_WQE_OP_ATOMIC |
				    ROCEMU_WQE_OP_COMPARE | ROCEMU_WQE_OP_DATA,
				    IBV_WC_COMP_SWAP, 0, ROCEMU_WC_LEN_ATOMIC },
	[MLX4_OPCODE_ATOMIC_FA] = { "ATOMIC_FA",
				    ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_RADDR | ROCEMU_WQE_OP_ATOMIC |
				    ROCEMU_WQE_OP_DATA,
				    IBV_WC_FETCH_ADD, 0, ROCEMU_WC_LEN_ATOMIC },
	/* ctrl only: completes once everything before it did */
	[MLX4_OPCODE_NOP] = { "NOP", ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_LOCAL, IBV_WC_SEND, 0,
			      ROCEMU_WC_LEN_NONE },
	/* ctrl and struct mlx4_wqe_local_inval_seg: mem_key */
	[MLX4_OPCODE_LOCAL_INVAL] = { "LOCAL_INVAL",
				      ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_LOCAL | ROCEMU_WQE_OP_INV,
				      IBV_WC_LOCAL_INV, 0, ROCEMU_WC_LEN_NONE },
	/* ctrl and struct mlx4_wqe_bind_seg */
	[MLX4_OPCODE_BIND_MW] = { "BIND_MW",
				  ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_LOCAL | ROCEMU_WQE_OP_BIND,
				  IBV_WC_BIND_MW, 0, ROCEMU_WC_LEN_NONE },
};

_Static_assert(MLX4_OPCODE_NOP == 0, "rocemu_wqe_opcode_map takes opcode 0 for no work request's");

/* Work request -> WQE opcode (libmlx4 mlx4_ib_opcode); 0 (NOP) is no work request's. */
static const uint8_t wr_opcodes[] = {
	[IBV_WR_RDMA_WRITE] = MLX4_OPCODE_RDMA_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = MLX4_OPCODE_RDMA_WRITE_IMM,
	[IBV_WR_SEND] = MLX4_OPCODE_SEND,
	[IBV_WR_SEND_WITH_IMM] = MLX4_OPCODE_SEND_IMM,
	[IBV_WR_RDMA_READ] = MLX4_OPCODE_RDMA_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = MLX4_OPCODE_ATOMIC_CS,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = MLX4_OPCODE_ATOMIC_FA,
	[IBV_WR_LOCAL_INV] = MLX4_OPCODE_LOCAL_INVAL,
	[IBV_WR_BIND_MW] = MLX4_OPCODE_BIND_MW,
	[IBV_WR_SEND_WITH_INV] = MLX4_OPCODE_SEND_INVAL,
};

int rocemu_mlx4_opcode_of_wr(enum ibv_wr_opcode wr_opcode)
{
	return rocemu_wqe_opcode_map(wr_opcodes, sizeof(wr_opcodes) / sizeof(wr_opcodes[0]),
				     rocemu_mlx4_wqe_ops, wr_opcode);
}

/* Receive completions after libmlx4's mlx4_parse_cqe. */
const struct rocemu_cqe_op rocemu_mlx4_recv_cqe_ops[32] = {
	[MLX4_RECV_OPCODE_RDMA_WRITE_IMM] = { "RECV_RDMA_WRITE_IMM", ROCEMU_CQE_OP_RQ,
					      IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_WITH_IMM },
	[MLX4_RECV_OPCODE_SEND] = { "RECV_SEND", ROCEMU_CQE_OP_RQ, IBV_WC_RECV, 0 },
	[MLX4_RECV_OPCODE_SEND_IMM] = { "RECV_SEND_IMM", ROCEMU_CQE_OP_RQ, IBV_WC_RECV,
					IBV_WC_WITH_IMM },
	[MLX4_RECV_OPCODE_SEND_INVAL] = { "RECV_SEND_INVAL", ROCEMU_CQE_OP_RQ, IBV_WC_RECV,
					  IBV_WC_WITH_INV },
	[MLX4_CQE_OPCODE_ERROR] = { "ERROR", ROCEMU_CQE_OP_RQ | ROCEMU_CQE_OP_ERR, IBV_WC_RECV, 0 },
};

/* ---- sizing ---- */

static uint32_t ilog2_ceil(uint64_t v)
{
	uint32_t l = 0;

	while ((1ull << l) < v)
		l++;
	return l;
}

/* The segment a QP type puts after ctrl (mlx4_calc_sq_wqe_size, mlx4_set_sq_sizes). */
static uint32_t sq_type_seg(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_UD:
		return sizeof(struct mlx4_wqe_datagram_seg);
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_XRC_SEND:
		return sizeof(struct mlx4_wqe_raddr_seg);
	default:
		return 0;
	}
}

/*
 * Inline segment headers max_inline bytes may need (libmlx4
 * num_inline_segs): segments never cross 64 bytes, and the first starts
 * after ctrl and the type's segment, 32 bytes into a chunk at worst.
 */
static uint32_t inline_segs(uint32_t max_inline, enum ibv_qp_type type)
{
	uint64_t data = max_inline + (sizeof(struct mlx4_wqe_ctrl_seg) +
				      (type == IBV_QPT_UD ? sizeof(struct mlx4_wqe_datagram_seg) :
							    sizeof(struct mlx4_wqe_raddr_seg))) %
				     MLX4_INLINE_ALIGN;
	uint32_t chunk = MLX4_INLINE_ALIGN - sizeof(struct mlx4_wqe_inline_seg);

	return (uint32_t)((data + chunk - 1) / chunk);
}

/* Bytes of the largest send WQE (libmlx4 mlx4_calc_sq_wqe_size). */
static uint64_t sq_wqe_bytes(enum ibv_qp_type type, uint32_t max_send_sge,
			     uint32_t max_inline_data, uint32_t max_tso_header)
{
	uint64_t inl_units = ((uint64_t)max_inline_data +
			      inline_segs(max_inline_data, type) * sizeof(struct mlx4_wqe_inline_seg) +
			      sizeof(struct mlx4_wqe_data_seg) - 1) / sizeof(struct mlx4_wqe_data_seg);
	uint64_t sge = inl_units > max_send_sge ? inl_units : max_send_sge;
	uint64_t size = sge * sizeof(struct mlx4_wqe_data_seg) + sq_type_seg(type);
	uint64_t atomic = sizeof(struct mlx4_wqe_atomic_seg) + sizeof(struct mlx4_wqe_raddr_seg) +
			  sizeof(struct mlx4_wqe_data_seg);

	if ((type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND) && size < atomic)
		size = atomic;
	if (size < sizeof(struct mlx4_wqe_bind_seg))
		size = sizeof(struct mlx4_wqe_bind_seg);
	size += sizeof(struct mlx4_wqe_ctrl_seg);
	if (max_tso_header)
		size += (sizeof(struct mlx4_wqe_lso_seg) + max_tso_header + 15) / 16 * 16;
	return size;
}

int rocemu_mlx4_wq_size(const struct ibv_qp_cap *want, enum ibv_qp_type type,
			uint32_t max_tso_header, uint32_t inl_recv_sz,
			struct rocemu_wq_sizes *sizes)
{
	uint32_t recv_sge = want->max_recv_sge ? want->max_recv_sge : 1;
	uint64_t recv_bytes = (uint64_t)recv_sge * sizeof(struct mlx4_wqe_data_seg);
	uint64_t bytes;

	if (want->max_send_wr > ROCEMU_SQ_MAX_BBS || want->max_recv_wr > ROCEMU_RQ_MAX_WQES ||
	    recv_sge > ROCEMU_RQ_MAX_STRIDE / ROCEMU_WQE_SEG || inl_recv_sz > ROCEMU_RQ_MAX_STRIDE)
		return -EINVAL;
	bytes = sq_wqe_bytes(type, want->max_send_sge, want->max_inline_data, max_tso_header);
	if (bytes > ROCEMU_MLX4_WQE_MAX_DS * ROCEMU_WQE_SEG)
		return -EINVAL;
	sizes->max_tso_header = max_tso_header;
	sizes->sq_wqe_bbs = 1;
	sizes->sq_wqe_shift = ilog2_ceil(bytes);
	if (sizes->sq_wqe_shift < ROCEMU_MLX4_SQ_MIN_SHIFT)
		sizes->sq_wqe_shift = ROCEMU_MLX4_SQ_MIN_SHIFT;
	if (type == IBV_QPT_XRC_RECV) {
		sizes->sq_spare = 0;
		sizes->sq_bbs = 0;
	} else {
		sizes->sq_spare = (ROCEMU_MLX4_SQ_HEADROOM >> sizes->sq_wqe_shift) + 1;
		sizes->sq_bbs = 1u << ilog2_ceil((uint64_t)want->max_send_wr + sizes->sq_spare);
		if (sizes->sq_bbs > ROCEMU_SQ_MAX_BBS)
			return -EINVAL;
	}
	if (inl_recv_sz > recv_bytes)
		recv_bytes = inl_recv_sz;
	sizes->rq_wqe_shift = ilog2_ceil(recv_bytes);
	if (sizes->rq_wqe_shift < ROCEMU_MLX4_RQ_MIN_SHIFT)
		sizes->rq_wqe_shift = ROCEMU_MLX4_RQ_MIN_SHIFT;
	sizes->rq_wqes = want->max_recv_wr ? 1u << ilog2_ceil(want->max_recv_wr) : 0;
	return 0;
}

void rocemu_mlx4_wq_caps(const struct rocemu_wq_sizes *sizes, enum ibv_qp_type type,
			 struct ibv_qp_cap *cap)
{
	uint32_t stride = 1u << sizes->sq_wqe_shift;
	/* What fence_size can describe bounds a WQE even where its stride has room for more. */
	uint32_t bytes = stride < ROCEMU_MLX4_WQE_MAX_DS * ROCEMU_WQE_SEG ?
		stride : ROCEMU_MLX4_WQE_MAX_DS * ROCEMU_WQE_SEG;
	uint32_t room = bytes - sizeof(struct mlx4_wqe_ctrl_seg) - sq_type_seg(type);

	cap->max_send_wr = sizes->sq_bbs ? sizes->sq_bbs - sizes->sq_spare : 0;
	cap->max_send_sge = room / sizeof(struct mlx4_wqe_data_seg);
	/* Inline segments never cross 64 bytes: one header per 64-byte chunk. */
	cap->max_inline_data = room - sizeof(struct mlx4_wqe_inline_seg) *
			       ((room + MLX4_INLINE_ALIGN - 1) / MLX4_INLINE_ALIGN);
	cap->max_recv_wr = sizes->rq_wqes;
	cap->max_recv_sge = (1u << sizes->rq_wqe_shift) / sizeof(struct mlx4_wqe_data_seg);
}

/* Error CQE syndrome -> status (libmlx4 mlx4_handle_error_cqe). */
static const uint8_t syndromes[] = {
	[MLX4_CQE_SYNDROME_LOCAL_LENGTH_ERR] = IBV_WC_LOC_LEN_ERR,
	[MLX4_CQE_SYNDROME_LOCAL_QP_OP_ERR] = IBV_WC_LOC_QP_OP_ERR,
	[MLX4_CQE_SYNDROME_LOCAL_PROT_ERR] = IBV_WC_LOC_PROT_ERR,
	[MLX4_CQE_SYNDROME_WR_FLUSH_ERR] = IBV_WC_WR_FLUSH_ERR,
	[MLX4_CQE_SYNDROME_MW_BIND_ERR] = IBV_WC_MW_BIND_ERR,
	[MLX4_CQE_SYNDROME_BAD_RESP_ERR] = IBV_WC_BAD_RESP_ERR,
	[MLX4_CQE_SYNDROME_LOCAL_ACCESS_ERR] = IBV_WC_LOC_ACCESS_ERR,
	[MLX4_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR] = IBV_WC_REM_INV_REQ_ERR,
	[MLX4_CQE_SYNDROME_REMOTE_ACCESS_ERR] = IBV_WC_REM_ACCESS_ERR,
	[MLX4_CQE_SYNDROME_REMOTE_OP_ERR] = IBV_WC_REM_OP_ERR,
	[MLX4_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR] = IBV_WC_RETRY_EXC_ERR,
	[MLX4_CQE_SYNDROME_RNR_RETRY_EXC_ERR] = IBV_WC_RNR_RETRY_EXC_ERR,
	[MLX4_CQE_SYNDROME_REMOTE_ABORTED_ERR] = IBV_WC_REM_ABORT_ERR,
};

enum ibv_wc_status rocemu_mlx4_cqe_error_status(uint8_t syndrome)
{
	uint8_t status = syndrome < sizeof(syndromes) / sizeof(syndromes[0]) ? syndromes[syndrome] : 0;

	/* IBV_WC_SUCCESS is 0: a row left empty is no syndrome of libmlx4's */
	return status ? (enum ibv_wc_status)status : IBV_WC_GENERAL_ERR;
}

uint8_t rocemu_mlx4_cqe_syndrome_of(enum ibv_wc_status status)
{
	for (size_t i = 0; i < sizeof(syndromes) / sizeof(syndromes[0]); i++)
		if (syndromes[i] && syndromes[i] == status)
			return (uint8_t)i;
	return MLX4_CQE_SYNDROME_LOCAL_QP_OP_ERR;
}
