/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The tables and the sizing rule of the shared-ring contract (ring.h),
 * compiled into both the shim and the daemon.
 */
#include "rocemu/ring.h"

#include <errno.h>

#define DATA_INLINE (ROCEMU_WQE_OP_DATA | ROCEMU_WQE_OP_INLINE)

/* Completions after rdma-core's mlx5 handle_good_req. */
const struct rocemu_wqe_op rocemu_wqe_ops[256] = {
	[MLX5_OPCODE_SEND] = { "SEND", ROCEMU_WQE_OP_VALID | DATA_INLINE | ROCEMU_WQE_OP_UD |
				       ROCEMU_WQE_OP_ETH,
			       IBV_WC_SEND, 0,
			       ROCEMU_WC_LEN_NONE },
	[MLX5_OPCODE_SEND_IMM] = { "SEND_IMM", ROCEMU_WQE_OP_VALID | DATA_INLINE | ROCEMU_WQE_OP_IMM |
				   ROCEMU_WQE_OP_UD,
				   IBV_WC_SEND, IBV_WC_WITH_IMM, ROCEMU_WC_LEN_NONE },
	[MLX5_OPCODE_SEND_INVAL] = { "SEND_INVAL",
				     ROCEMU_WQE_OP_VALID | DATA_INLINE | ROCEMU_WQE_OP_INV,
				     IBV_WC_SEND, 0, ROCEMU_WC_LEN_NONE },
	[MLX5_OPCODE_RDMA_WRITE] = { "RDMA_WRITE",
				     ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_RADDR | DATA_INLINE,
				     IBV_WC_RDMA_WRITE, 0, ROCEMU_WC_LEN_NONE },
	[MLX5_OPCODE_RDMA_WRITE_IMM] = { "RDMA_WRITE_IMM",
					 ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_RADDR | DATA_INLINE |
					 ROCEMU_WQE_OP_IMM,
					 IBV_WC_RDMA_WRITE, IBV_WC_WITH_IMM, ROCEMU_WC_LEN_NONE },
	[MLX5_OPCODE_RDMA_READ] = { "RDMA_READ",
				    ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_RADDR | ROCEMU_WQE_OP_DATA |
				    ROCEMU_WQE_OP_READ,
				    IBV_WC_RDMA_READ, 0, ROCEMU_WC_LEN_CQE },
	[MLX5_OPCODE_ATOMIC_CS] = { "ATOMIC_CS",
				    ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_RADDR | ROCEMU_WQE_OP_ATOMIC |
				    ROCEMU_WQE_OP_COMPARE | ROCEMU_WQE_OP_DATA,
				    IBV_WC_COMP_SWAP, 0, ROCEMU_WC_LEN_ATOMIC },
	[MLX5_OPCODE_ATOMIC_FA] = { "ATOMIC_FA",
				    ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_RADDR | ROCEMU_WQE_OP_ATOMIC |
				    ROCEMU_WQE_OP_DATA,
				    IBV_WC_FETCH_ADD, 0, ROCEMU_WC_LEN_ATOMIC },
	/* RAW_PACKET: frames of mss bytes after the Ethernet segment's header (mlx5 set_tso_eth_seg) */
	[MLX5_OPCODE_TSO] = { "TSO", ROCEMU_WQE_OP_VALID | DATA_INLINE | ROCEMU_WQE_OP_ETH |
				     ROCEMU_WQE_OP_TSO,
			      IBV_WC_TSO, 0, ROCEMU_WC_LEN_NONE },
	/* ctrl only: completes once everything before it did (UCX's flush and fence) */
	[MLX5_OPCODE_NOP] = { "NOP", ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_LOCAL, IBV_WC_SEND, 0,
			      ROCEMU_WC_LEN_NONE },
	/* ctrl only, imm = the key (mlx5 puts it there too) */
	[MLX5_OPCODE_LOCAL_INVAL] = { "LOCAL_INVAL",
				      ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_LOCAL | ROCEMU_WQE_OP_INV,
				      IBV_WC_LOCAL_INV, 0, ROCEMU_WC_LEN_NONE },
	/* memory window bind: ctrl and rocemu's bind segment */
	[MLX5_OPCODE_UMR] = { "UMR", ROCEMU_WQE_OP_VALID | ROCEMU_WQE_OP_LOCAL | ROCEMU_WQE_OP_BIND,
			      IBV_WC_BIND_MW, 0, ROCEMU_WC_LEN_NONE },
};

_Static_assert(MLX5_OPCODE_NOP == 0, "rocemu_wqe_opcode_map takes opcode 0 for no work request's");

/* Work request -> WQE opcode (mlx5_ib_opcode); 0 (NOP) is no work request's. */
static const uint8_t wr_opcodes[] = {
	[IBV_WR_RDMA_WRITE] = MLX5_OPCODE_RDMA_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = MLX5_OPCODE_RDMA_WRITE_IMM,
	[IBV_WR_SEND] = MLX5_OPCODE_SEND,
	[IBV_WR_SEND_WITH_IMM] = MLX5_OPCODE_SEND_IMM,
	[IBV_WR_RDMA_READ] = MLX5_OPCODE_RDMA_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = MLX5_OPCODE_ATOMIC_CS,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = MLX5_OPCODE_ATOMIC_FA,
	[IBV_WR_LOCAL_INV] = MLX5_OPCODE_LOCAL_INVAL,
	[IBV_WR_BIND_MW] = MLX5_OPCODE_UMR,
	[IBV_WR_SEND_WITH_INV] = MLX5_OPCODE_SEND_INVAL,
	[IBV_WR_TSO] = MLX5_OPCODE_TSO,
};

int rocemu_wqe_opcode_map(const uint8_t *map, size_t n, const struct rocemu_wqe_op *ops,
			  enum ibv_wr_opcode wr_opcode)
{
	uint8_t opcode;

	if ((unsigned int)wr_opcode >= n)
		return -1;
	opcode = map[wr_opcode];
	/* 0 is NOP in both formats: no work request's */
	return opcode && (ops[opcode].flags & ROCEMU_WQE_OP_VALID) ? opcode : -1;
}

int rocemu_wqe_opcode_of_wr(enum ibv_wr_opcode wr_opcode)
{
	return rocemu_wqe_opcode_map(wr_opcodes, sizeof(wr_opcodes) / sizeof(wr_opcodes[0]),
				     rocemu_wqe_ops, wr_opcode);
}

/* Completions after rdma-core's mlx5 handle_responder and mlx5_parse_cqe. */
const struct rocemu_cqe_op rocemu_cqe_ops[16] = {
	[MLX5_CQE_REQ] = { "REQ", ROCEMU_CQE_OP_SQ, 0, 0 },
	[MLX5_CQE_RESP_WR_IMM] = { "RESP_WR_IMM", ROCEMU_CQE_OP_RQ, IBV_WC_RECV_RDMA_WITH_IMM,
				   IBV_WC_WITH_IMM },
	[MLX5_CQE_RESP_SEND] = { "RESP_SEND", ROCEMU_CQE_OP_RQ, IBV_WC_RECV, 0 },
	[MLX5_CQE_RESP_SEND_IMM] = { "RESP_SEND_IMM", ROCEMU_CQE_OP_RQ, IBV_WC_RECV,
				     IBV_WC_WITH_IMM },
	[MLX5_CQE_RESP_SEND_INV] = { "RESP_SEND_INV", ROCEMU_CQE_OP_RQ, IBV_WC_RECV,
				     IBV_WC_WITH_INV },
	[MLX5_CQE_REQ_ERR] = { "REQ_ERR", ROCEMU_CQE_OP_SQ | ROCEMU_CQE_OP_ERR, 0, 0 },
	[MLX5_CQE_RESP_ERR] = { "RESP_ERR", ROCEMU_CQE_OP_RQ | ROCEMU_CQE_OP_ERR, IBV_WC_RECV, 0 },
};

/* ---- sizing ---- */

/* Datagrams and frames: no RDMA, no atomics (mlx5 sq_overhead's UD and RAW_PACKET). */
static bool sq_sends_only(enum ibv_qp_type type)
{
	return type == IBV_QPT_UD || type == IBV_QPT_RAW_PACKET;
}

/*
 * ctrl, the QP type's segment (UD's and DCI's datagram, XRC's, the Ethernet
 * one), raddr unless sends only (mlx5 sq_overhead), and room for a TSO
 * header of max_tso_header bytes inline, as mlx5_calc_send_wqe adds it.
 */
static uint32_t sq_wqe_header(enum ibv_qp_type type, uint32_t max_tso_header)
{
	return sizeof(struct mlx5_wqe_ctrl_seg) + rocemu_wqe_qp_header_ds(type) * ROCEMU_WQE_SEG +
	       (sq_sends_only(type) ? 0 : sizeof(struct mlx5_wqe_raddr_seg)) +
	       (max_tso_header + ROCEMU_WQE_SEG - 1) / ROCEMU_WQE_SEG * ROCEMU_WQE_SEG;
}

/* An atomic's segment, before its data, on every type but UD and RAW_PACKET (mlx5 sq_overhead's atomic_size). */
static uint32_t sq_wqe_atomic(enum ibv_qp_type type)
{
	return sq_sends_only(type) ? 0 : sizeof(struct mlx5_wqe_atomic_seg);
}

#define WQE_MAX_BYTES (ROCEMU_WQE_DS_MASK * ROCEMU_WQE_SEG)

static uint64_t pow2_roundup(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static uint32_t ilog2(uint64_t pow2)
{
	uint32_t l = 0;

	while ((1ull << l) < pow2)
		l++;
	return l;
}

/* Bytes of the largest send WQE with these caps, before rounding to BBs. */
static uint64_t sq_wqe_bytes(enum ibv_qp_type type, uint32_t max_send_sge,
			     uint32_t max_inline_data, uint32_t max_tso_header)
{
	/* an atomic with every SGE fits, as a WRITE of inline data does */
	uint64_t data = sq_wqe_atomic(type) + (uint64_t)max_send_sge * ROCEMU_WQE_SEG;
	uint64_t inl = (sizeof(struct mlx5_wqe_inl_data_seg) + (uint64_t)max_inline_data +
			ROCEMU_WQE_SEG - 1) / ROCEMU_WQE_SEG * ROCEMU_WQE_SEG;

	return sq_wqe_header(type, max_tso_header) + (data > inl ? data : inl);
}

uint32_t rocemu_sq_wqe_bbs(enum ibv_qp_type type, uint32_t max_send_sge,
			   uint32_t max_inline_data, uint32_t max_tso_header)
{
	return (uint32_t)((sq_wqe_bytes(type, max_send_sge, max_inline_data, max_tso_header) +
			   ROCEMU_WQE_BB - 1) / ROCEMU_WQE_BB);
}

int rocemu_wq_size(const struct ibv_qp_cap *want, enum ibv_qp_type type,
		   uint32_t max_tso_header, struct rocemu_wq_sizes *sizes)
{
	uint32_t recv_sge = want->max_recv_sge ? want->max_recv_sge : 1;

	/* Checked before any product: each factor is small once these hold. */
	if (sq_wqe_bytes(type, want->max_send_sge, want->max_inline_data, max_tso_header) >
	    WQE_MAX_BYTES ||
	    want->max_send_wr > ROCEMU_SQ_MAX_BBS || want->max_recv_wr > ROCEMU_RQ_MAX_WQES ||
	    recv_sge > ROCEMU_RQ_MAX_STRIDE / ROCEMU_WQE_SEG)
		return -EINVAL;
	sizes->max_tso_header = max_tso_header;
	sizes->sq_wqe_shift = 6;	/* MLX5_SEND_WQE_SHIFT */
	sizes->sq_spare = 0;
	sizes->sq_wqe_bbs = rocemu_sq_wqe_bbs(type, want->max_send_sge, want->max_inline_data,
					      max_tso_header);
	sizes->sq_bbs = want->max_send_wr ?
			(uint32_t)pow2_roundup((uint64_t)want->max_send_wr * sizes->sq_wqe_bbs) : 0;
	/* mlx5 calc_sq_size: wqe_cnt > max_send_wqebb is EINVAL */
	if (sizes->sq_bbs > ROCEMU_SQ_MAX_BBS)
		return -EINVAL;
	sizes->rq_wqe_shift = ilog2(pow2_roundup((uint64_t)recv_sge * ROCEMU_WQE_SEG));
	sizes->rq_wqes = want->max_recv_wr ? (uint32_t)pow2_roundup(want->max_recv_wr) : 0;
	return 0;
}

int rocemu_srq_size(uint32_t max_wr, uint32_t max_sge, struct rocemu_srq_sizes *sizes)
{
	uint64_t stride = sizeof(struct mlx5_wqe_srq_next_seg) + (uint64_t)max_sge * ROCEMU_WQE_SEG;
	uint64_t wqes = pow2_roundup((uint64_t)max_wr + 1);

	stride = pow2_roundup(stride < ROCEMU_SRQ_MIN_STRIDE ? ROCEMU_SRQ_MIN_STRIDE : stride);
	if (stride > ROCEMU_RQ_MAX_STRIDE || wqes > ROCEMU_SRQ_MAX_WQES)
		return -EINVAL;
	sizes->wqes = (uint32_t)wqes;
	sizes->wqe_shift = ilog2(stride);
	return 0;
}

uint32_t rocemu_cq_size(uint32_t cqe)
{
	uint64_t ncqe = pow2_roundup((uint64_t)cqe + 1);

	return ncqe < 2 ? 2 : (uint32_t)ncqe;
}

void rocemu_wq_caps(const struct rocemu_wq_sizes *sizes, enum ibv_qp_type type,
		    struct ibv_qp_cap *cap)
{
	uint32_t bytes = sizes->sq_wqe_bbs * ROCEMU_WQE_BB;
	/* What ds can describe bounds a WQE even where its BBs have room for more. */
	uint32_t room = (bytes < WQE_MAX_BYTES ? bytes : WQE_MAX_BYTES) -
			sq_wqe_header(type, sizes->max_tso_header);

	cap->max_send_wr = sizes->sq_bbs / sizes->sq_wqe_bbs;
	cap->max_send_sge = (room - sq_wqe_atomic(type)) / ROCEMU_WQE_SEG;
	cap->max_inline_data = room - sizeof(struct mlx5_wqe_inl_data_seg);
	cap->max_recv_wr = sizes->rq_wqes;
	cap->max_recv_sge = (1u << sizes->rq_wqe_shift) / ROCEMU_WQE_SEG;
}

/* Error CQE syndrome -> status (rdma-core mlx5_handle_error_cqe) and libibverbs' words for it. */
static const struct {
	uint8_t status;		/* 0: general error */
	const char *text;
} syndromes[] = {
	[MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR] = { IBV_WC_LOC_LEN_ERR, "local length error" },
	[MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR] = { IBV_WC_LOC_QP_OP_ERR, "local QP operation error" },
	[MLX5_CQE_SYNDROME_LOCAL_PROT_ERR] = { IBV_WC_LOC_PROT_ERR, "local protection error" },
	[MLX5_CQE_SYNDROME_WR_FLUSH_ERR] = { IBV_WC_WR_FLUSH_ERR, "Work Request Flushed Error" },
	[MLX5_CQE_SYNDROME_MW_BIND_ERR] = { IBV_WC_MW_BIND_ERR, "memory management operation error" },
	[MLX5_CQE_SYNDROME_BAD_RESP_ERR] = { IBV_WC_BAD_RESP_ERR, "bad response error" },
	[MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR] = { IBV_WC_LOC_ACCESS_ERR, "local access error" },
	[MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR] = { IBV_WC_REM_INV_REQ_ERR,
						     "remote invalid request error" },
	[MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR] = { IBV_WC_REM_ACCESS_ERR, "remote access error" },
	[MLX5_CQE_SYNDROME_REMOTE_OP_ERR] = { IBV_WC_REM_OP_ERR, "remote operation error" },
	[MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR] = { IBV_WC_RETRY_EXC_ERR,
							"transport retry counter exceeded" },
	[MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR] = { IBV_WC_RNR_RETRY_EXC_ERR,
						  "RNR retry counter exceeded" },
	[MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR] = { IBV_WC_REM_ABORT_ERR, "aborted error" },
};

enum ibv_wc_status rocemu_cqe_error_status(uint8_t syndrome)
{
	uint8_t status = syndrome < sizeof(syndromes) / sizeof(syndromes[0]) ?
		syndromes[syndrome].status : 0;

	return status ? (enum ibv_wc_status)status : IBV_WC_GENERAL_ERR;
}

uint8_t rocemu_cqe_syndrome_of(enum ibv_wc_status status)
{
	for (size_t i = 0; i < sizeof(syndromes) / sizeof(syndromes[0]); i++)
		if (syndromes[i].status == status)
			return (uint8_t)i;
	return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
}

const char *rocemu_cqe_error_text(uint8_t syndrome)
{
	return rocemu_cqe_error_status(syndrome) == IBV_WC_GENERAL_ERR ? "general error" :
		syndromes[syndrome].text;
}
