/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A ConnectX-3 CQ's parser (lib/mlx4/poll.c) on CQEs laid out as the
 * daemon writes them (include/rocemu/ring_mlx4.h), against the work
 * completions libmlx4's mlx4_parse_cqe makes of them: sends freeing up to
 * their wqe_index, receives from an RQ, an SRQ and an XRC SRQ, errors,
 * owner bits in 32- and 64-byte entries; the arm word; and the CQ clean's
 * sweep of one QP's CQEs (lib/mlx4/cq_clean.c).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"

#define QPN 0x000123
#define OTHER_QPN 0x000321
#define SRQN 0x000077
#define NCQE 8

static struct rocemu_context rctx;
static struct rocemu_cq cq;
static struct rocemu_qp qp;
static struct rocemu_srq srq;
static _Alignas(64) uint8_t ring[NCQE * 64];
static __be32 dbrec[2];
static uint64_t sq_wrid[8], rq_wrid[8];
static uint32_t sq_head[8];
static struct rocemu_srq *srq_freed;
static uint16_t srq_freed_idx;
static int doorbells;

struct rocemu_qp *rocemu_qp_table_find(struct rocemu_context *ctx, uint32_t qpn)
{
	ck_assert_ptr_eq(ctx, &rctx);
	return qpn == QPN ? &qp : NULL;
}

/* Not reached: the daemon is never lost here. */
bool rocemu_cq_flush_one(struct rocemu_cq *c, struct ibv_wc *wc)
{
	(void)c, (void)wc;
	abort();
}

void rocemu_conn_check(struct rocemu_conn *conn)
{
	(void)conn;
}

void rocemu_ctx_doorbell(struct rocemu_context *ctx)
{
	ck_assert_ptr_eq(ctx, &rctx);
	doorbells++;
}

uint64_t rocemu_srq_complete(struct rocemu_srq *s, uint16_t wqe_counter)
{
	srq_freed = s;
	srq_freed_idx = wqe_counter;
	return 0x5000 + wqe_counter;
}

static void setup(uint32_t cqe_size)
{
	memset(&rctx, 0, sizeof(rctx));
	memset(&cq, 0, sizeof(cq));
	memset(&qp, 0, sizeof(qp));
	memset(&srq, 0, sizeof(srq));
	memset(dbrec, 0, sizeof(dbrec));
	srq_freed = NULL;
	doorbells = 0;
	rctx.info.model = ROCEMU_MODEL_CX3;
	cq.ibcq.context = &rctx.vctx.context;
	cq.mlx4 = true;
	pthread_spin_init(&cq.lock, PTHREAD_PROCESS_PRIVATE);
	cq.ncqe = NCQE;
	cq.cqe_size = cqe_size;
	cq.buf = ring;
	cq.dbrec = dbrec;
	cq.arm_sn = 1;
	/* A CQ starts with every owner bit set: none is software's on the first pass. */
	memset(ring, 0, sizeof(ring));
	for (uint32_t i = 0; i < NCQE; i++)
		rocemu_mlx4_cqe_at(ring, cqe_size, NCQE, i)->owner_sr_opcode = MLX4_CQE_OWNER_MASK;
	qp.qpn = QPN;
	qp.qpx.qp_base.qp_num = QPN;
	qp.sq.wqe_cnt = 8;
	qp.sq.wrid = sq_wrid;
	qp.sq.wqe_head = sq_head;
	qp.rq.wqe_cnt = 8;
	qp.rq.wrid = rq_wrid;
	for (uint32_t i = 0; i < 8; i++) {
		sq_wrid[i] = 100 + i;
		sq_head[i] = i;	/* one WQE per entry */
		rq_wrid[i] = 200 + i;
	}
	qp.sq.cur_post = 4;
	qp.rq.head = 4;
	srq.srqn = SRQN;
}

/* The CQE the daemon writes at producer index pi, owner bit last. */
static struct mlx4_cqe *put(uint32_t pi, uint8_t opcode, bool is_send, uint32_t qpn,
			    uint16_t wqe_index)
{
	struct mlx4_cqe *cqe = rocemu_mlx4_cqe_at(ring, cq.cqe_size, NCQE, pi);
	uint8_t owner = rocemu_mlx4_cqe_owner_sr_opcode(opcode, is_send, pi, NCQE);

	memset(cqe, 0, sizeof(*cqe) - 1);
	cqe->vlan_my_qpn = htobe32(qpn);
	cqe->wqe_index = htobe16(wqe_index);
	__atomic_store_n(&cqe->owner_sr_opcode, owner, __ATOMIC_RELEASE);
	return cqe;
}

static bool poll_one(struct ibv_wc *wc)
{
	struct rocemu_qp *cache = NULL;

	return rocemu_mlx4_cq_poll_one(&cq, wc, &cache);
}

/* A send CQE names its WQE: it and those before it are done (libmlx4 moves tail past it). */
START_TEST(test_send_read)
{
	struct ibv_wc wc;

	setup(64);
	put(0, MLX4_OPCODE_RDMA_READ, true, QPN, 2)->byte_cnt = htobe32(100);
	ck_assert(poll_one(&wc));
	ck_assert_uint_eq(wc.wr_id, 102);
	ck_assert_uint_eq(qp.sq.tail, 3);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, IBV_WC_RDMA_READ);
	ck_assert_uint_eq(wc.byte_len, 100);
	ck_assert_uint_eq(wc.qp_num, QPN);
	ck_assert_uint_eq(cq.cons_index, 1);
	ck_assert(!poll_one(&wc));
}
END_TEST

START_TEST(test_send_kinds)
{
	struct ibv_wc wc;

	setup(32);
	put(0, MLX4_OPCODE_ATOMIC_FA, true, QPN, 0);
	put(1, MLX4_OPCODE_RDMA_WRITE_IMM, true, QPN, 1);
	put(2, MLX4_OPCODE_SEND_INVAL, true, QPN, 2);
	ck_assert(poll_one(&wc));
	ck_assert_int_eq(wc.opcode, IBV_WC_FETCH_ADD);
	ck_assert_uint_eq(wc.byte_len, 8);
	ck_assert(poll_one(&wc));
	ck_assert_int_eq(wc.opcode, IBV_WC_RDMA_WRITE);
	ck_assert_uint_eq(wc.wc_flags, IBV_WC_WITH_IMM);
	ck_assert(poll_one(&wc));
	ck_assert_int_eq(wc.opcode, IBV_WC_SEND);
	ck_assert_uint_eq(wc.wr_id, 102);
}
END_TEST

/* A receive from the RQ: the oldest WQE; mlx4_parse_cqe's fields of a RoCE port. */
START_TEST(test_recv_rq)
{
	struct mlx4_cqe *cqe;
	struct ibv_wc wc;

	setup(64);
	cqe = put(0, MLX4_RECV_OPCODE_SEND_IMM, false, QPN, 0);
	cqe->byte_cnt = htobe32(64);
	cqe->immed_rss_invalid = htobe32(0x12345685);
	cqe->g_mlpath_rqpn = htobe32(0x80000000u | 3u << 24 | OTHER_QPN);
	cqe->sl_vid = htobe16(5u << 13 | 7);
	cqe->rlid = htobe16(0x99);
	ck_assert(poll_one(&wc));
	ck_assert_uint_eq(wc.wr_id, 200);
	ck_assert_uint_eq(qp.rq.tail, 1);
	ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
	ck_assert_uint_eq(wc.wc_flags, IBV_WC_WITH_IMM | IBV_WC_GRH);
	ck_assert_uint_eq(wc.imm_data, htobe32(0x12345685));	/* as on the wire */
	ck_assert_uint_eq(wc.byte_len, 64);
	ck_assert_uint_eq(wc.src_qp, OTHER_QPN);
	ck_assert_uint_eq(wc.dlid_path_bits, 3);
	ck_assert_uint_eq(wc.sl, 5);
	ck_assert_uint_eq(wc.slid, 0x99);
	ck_assert_uint_eq(wc.pkey_index, 0x05);	/* libmlx4 reads it from the same word */
}
END_TEST

START_TEST(test_recv_inval_and_write_imm)
{
	struct ibv_wc wc;

	setup(64);
	put(0, MLX4_RECV_OPCODE_SEND_INVAL, false, QPN, 0)->immed_rss_invalid = htobe32(0x4242);
	put(1, MLX4_RECV_OPCODE_RDMA_WRITE_IMM, false, QPN, 0)->immed_rss_invalid = htobe32(7);
	ck_assert(poll_one(&wc));
	ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
	ck_assert_uint_eq(wc.wc_flags, IBV_WC_WITH_INV);
	ck_assert_uint_eq(wc.invalidated_rkey, 0x4242);
	ck_assert(poll_one(&wc));
	ck_assert_int_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	ck_assert_uint_eq(wc.imm_data, htobe32(7));
	ck_assert_uint_eq(wc.wr_id, 201);
}
END_TEST

/* A receive of a QP with an SRQ frees the SRQ WQE its wqe_index names. */
START_TEST(test_recv_srq)
{
	struct ibv_wc wc;

	setup(64);
	qp.qpx.qp_base.srq = &srq.ibsrq;
	put(0, MLX4_RECV_OPCODE_SEND, false, QPN, 6);
	ck_assert(poll_one(&wc));
	ck_assert_ptr_eq(srq_freed, &srq);
	ck_assert_uint_eq(srq_freed_idx, 6);
	ck_assert_uint_eq(wc.wr_id, 0x5006);
	ck_assert_uint_eq(qp.rq.tail, 0);
}
END_TEST

/* An XRC SRQ's receive: MLX4_XRC_QPN_BIT in the QPN, the SRQ in g_mlpath_rqpn, no QP needed. */
START_TEST(test_recv_xrc_srq)
{
	struct ibv_wc wc;

	setup(64);
	cq.xrc_srqs = &srq;
	put(0, MLX4_RECV_OPCODE_SEND, false, ROCEMU_MLX4_XRC_QPN_BIT | 0x000abc, 2)->g_mlpath_rqpn =
		htobe32(SRQN);
	ck_assert(poll_one(&wc));
	ck_assert_ptr_eq(srq_freed, &srq);
	ck_assert_uint_eq(srq_freed_idx, 2);
	ck_assert_uint_eq(wc.qp_num, ROCEMU_MLX4_XRC_QPN_BIT | 0x000abc);
	/* An SRQ this CQ does not know, like a QP it does not know: dropped, the next one read */
	put(1, MLX4_RECV_OPCODE_SEND, false, ROCEMU_MLX4_XRC_QPN_BIT | 1, 0)->g_mlpath_rqpn =
		htobe32(SRQN + 1);
	put(2, MLX4_RECV_OPCODE_SEND, false, OTHER_QPN, 0);
	put(3, MLX4_RECV_OPCODE_SEND, false, QPN, 0);
	ck_assert(poll_one(&wc));
	ck_assert_uint_eq(wc.qp_num, QPN);
	ck_assert_uint_eq(cq.cons_index, 4);
}
END_TEST

/* Errors: the syndrome's status, the vendor syndrome; a send error still frees its WQE. */
START_TEST(test_errors)
{
	struct mlx4_err_cqe *e;
	struct ibv_wc wc;

	setup(64);
	e = (struct mlx4_err_cqe *)put(0, MLX4_CQE_OPCODE_ERROR, true, QPN, 1);
	e->syndrome = MLX4_CQE_SYNDROME_REMOTE_ACCESS_ERR;
	e->vendor_err = 0x88;
	e = (struct mlx4_err_cqe *)put(1, MLX4_CQE_OPCODE_ERROR, false, QPN, 0);
	e->syndrome = MLX4_CQE_SYNDROME_WR_FLUSH_ERR;
	ck_assert(poll_one(&wc));
	ck_assert_int_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(wc.vendor_err, 0x88);
	ck_assert_uint_eq(wc.wr_id, 101);
	ck_assert_uint_eq(qp.sq.tail, 2);
	ck_assert(poll_one(&wc));
	ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(wc.wr_id, 200);
}
END_TEST

/* Owner bits: index i is software's when its bit equals i's pass; 32-byte entries too. */
START_TEST(test_owner_passes)
{
	struct ibv_wc wc[NCQE + 2];

	setup(32);
	qp.sq.cur_post = NCQE + 2;
	for (uint32_t i = 0; i < NCQE; i++)
		put(i, MLX4_OPCODE_SEND, true, QPN, (uint16_t)(i % 8));
	ck_assert_int_eq(rocemu_mlx4_poll_cq_op(ibv_cq_ex_to_cq(&cq.ibcq), NCQE + 2, wc), NCQE);
	ck_assert_uint_eq(be32toh(dbrec[ROCEMU_CQ_DBR_SET_CI]), NCQE);
	/* The first pass's entries left in the ring read as the device's on the second. */
	ck_assert_int_eq(rocemu_mlx4_poll_cq_op(ibv_cq_ex_to_cq(&cq.ibcq), 1, wc), 0);
	put(NCQE, MLX4_OPCODE_SEND, true, QPN, 0);
	ck_assert_int_eq(rocemu_mlx4_poll_cq_op(ibv_cq_ex_to_cq(&cq.ibcq), 2, wc), 1);
	ck_assert_uint_eq(be32toh(dbrec[ROCEMU_CQ_DBR_SET_CI]), NCQE + 1);
}
END_TEST

START_TEST(test_arm)
{
	setup(64);
	cq.cons_index = 0x1234;
	ck_assert_int_eq(rocemu_mlx4_req_notify_cq_op(ibv_cq_ex_to_cq(&cq.ibcq), 1), 0);
	ck_assert_uint_eq(be32toh(dbrec[ROCEMU_CQ_DBR_ARM]),
			  1u << 28 | MLX4_CQ_DB_REQ_NOT_SOL | 0x1234);
	ck_assert_int_eq(doorbells, 1);
	ck_assert(rocemu_mlx4_cq_armed(be32toh(dbrec[ROCEMU_CQ_DBR_ARM])));
	ck_assert(!rocemu_mlx4_cq_arm_all(be32toh(dbrec[ROCEMU_CQ_DBR_ARM])));
}
END_TEST

/* The sweep's steps: a QP's CQEs go (an SRQ receive giving its WQE back), older ones move up. */
START_TEST(test_sweep_ops)
{
	const struct rocemu_cqe_sweep_ops *ops = &rocemu_mlx4_cqe_sweep_ops;
	struct mlx4_cqe *dest;

	setup(64);
	put(0, MLX4_OPCODE_SEND, true, OTHER_QPN, 4);
	put(1, MLX4_RECV_OPCODE_SEND, false, QPN, 3);
	ck_assert(ops->ready(&cq, 0) && ops->ready(&cq, 1) && !ops->ready(&cq, 2));
	ck_assert(ops->drop(&cq, 1, QPN, false, &srq));
	ck_assert_ptr_eq(srq_freed, &srq);
	ck_assert_uint_eq(srq_freed_idx, 3);
	ck_assert(!ops->drop(&cq, 0, QPN, false, &srq));
	ops->move(&cq, 0, 1);
	dest = rocemu_mlx4_cqe_at(ring, 64, NCQE, 1);
	ck_assert_uint_eq(rocemu_mlx4_cqe_qpn(dest), OTHER_QPN);
	ck_assert_uint_eq(be16toh(dest->wqe_index), 4);
	/* Slot 1's owner bit stays its own: software's for index 1 of the first pass. */
	ck_assert_uint_eq(dest->owner_sr_opcode, MLX4_CQE_IS_SEND_MASK | MLX4_OPCODE_SEND);
	ck_assert(ops->ready(&cq, 1));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mlx4_poll");
	TCase *tc = tcase_create("mlx4_poll");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_send_read);
	tcase_add_test(tc, test_send_kinds);
	tcase_add_test(tc, test_recv_rq);
	tcase_add_test(tc, test_recv_inval_and_write_imm);
	tcase_add_test(tc, test_recv_srq);
	tcase_add_test(tc, test_recv_xrc_srq);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_owner_passes);
	tcase_add_test(tc, test_arm);
	tcase_add_test(tc, test_sweep_ops);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
