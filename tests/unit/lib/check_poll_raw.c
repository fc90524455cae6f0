/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Completions of a RAW_PACKET QP (lib/datapath/poll.c, cq_ex.c) from CQEs
 * laid as include/rocemu/ring.h says a ConnectX writes an Ethernet RQ's:
 * MLX5_CQE_L2_OK set, the QP named in flags_rqpn while sop_drop_qpn is the flow tag;
 * IBV_WC_IP_CSUM_OK exactly when L3 and L4 are OK on IPv4 and the QP's port
 * is set (mlx5's get_csum_ok and MLX5_RX_CSUM_VALID); ibv_wc_read_flow_tag
 * and ibv_wc_read_cvlan; the send completion of a TSO WQE.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"

#define QPN 0x000456
#define FLOW_TAG 0x00abcdef
#define VLAN_TCI 0x2064
#define NCQE 4

static struct rocemu_context rctx;
static struct rocemu_qp qp;
static struct rocemu_cq cq;
static struct mlx5_cqe64 cqes[NCQE];
static __be32 dbrec[2];
static uint64_t sq_wrid[4], rq_wrid[4];
static uint32_t sq_wqe_head[4];
static uint8_t sq_wr_opcode[4];

struct rocemu_qp *rocemu_qp_table_find(struct rocemu_context *ctx, uint32_t qpn)
{
	ck_assert_ptr_eq(ctx, &rctx);
	return qpn == QPN ? &qp : NULL;
}

/* Not reached: the QP has no SRQ, the daemon does not go away, the CQ is never empty unlocked. */
uint64_t rocemu_srq_complete(struct rocemu_srq *srq, uint16_t wqe_counter)
{
	(void)srq;
	(void)wqe_counter;
	abort();
}

void rocemu_conn_check(struct rocemu_conn *conn)
{
	(void)conn;
	abort();
}

bool rocemu_cq_flush_one(struct rocemu_cq *c, struct ibv_wc *wc)
{
	(void)c;
	(void)wc;
	abort();
}

/* Not reached: mlx5dv_clock.c's exported verbs are not called, only rocemu_clock_info. */
struct rocemu_device *rocemu_device_of(struct ibv_device *dev)
{
	(void)dev;
	abort();
}

void *rocemu_real(enum rocemu_real_fn fn)
{
	(void)fn;
	abort();
}

static void rings_open(void)
{
	size_t i;

	memset(&rctx, 0, sizeof(rctx));
	memset(&qp, 0, sizeof(qp));
	memset(&cq, 0, sizeof(cq));
	memset(cqes, 0, sizeof(cqes));
	for (i = 0; i < NCQE; i++)
		cqes[i].op_own = MLX5_CQE_INVALID << 4;	/* nothing written yet */
	memset(dbrec, 0, sizeof(dbrec));
	qp.qpn = QPN;
	qp.type = IBV_QPT_RAW_PACKET;
	qp.qpx.qp_base.qp_type = IBV_QPT_RAW_PACKET;
	qp.sq = (struct rocemu_sq){ .wqe_cnt = 4, .cur_post = 2, .wrid = sq_wrid,
				    .wqe_head = sq_wqe_head, .wr_opcode = sq_wr_opcode };
	qp.rq = (struct rocemu_rq){ .wqe_cnt = 4, .head = 2, .wrid = rq_wrid };
	sq_wrid[0] = 10;
	sq_wqe_head[0] = 1;	/* a TSO WQE of 2 BBs */
	rq_wrid[0] = 20;
	rq_wrid[1] = 21;
	rocemu_qp_raw_port_set(&qp);
	cq.ibcq.context = &rctx.vctx.context;
	cq.ncqe = NCQE;
	cq.buf = cqes;
	cq.cqe_size = sizeof(cqes[0]);
	cq.dbrec = dbrec;
	cq.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_FLOW_TAG | IBV_WC_EX_WITH_CVLAN;
	pthread_spin_init(&cq.lock, PTHREAD_PROCESS_PRIVATE);
	rocemu_cq_ex_set_poll_ops(&cq.ibcq);
}

static void rings_close(void)
{
	pthread_spin_destroy(&cq.lock);
}

/* A received frame's CQE at i, as the daemon writes it (first pass: owner bit 0). */
static void raw_recv_cqe(uint32_t i, uint8_t ip_ok, uint8_t l3_type, bool vlan)
{
	struct mlx5_cqe64 *c = &cqes[i];

	c->flags_rqpn = htobe32(QPN);
	c->sop_drop_qpn = htobe32(FLOW_TAG);
	c->byte_cnt = htobe32(1514);
	c->hds_ip_ext = MLX5_CQE_L2_OK | ip_ok;
	c->l4_hdr_type_etc = (uint8_t)(l3_type << 2 | (vlan ? ROCEMU_CQE_VLAN_STRIPPED : 0));
	c->vlan_info = vlan ? htobe16(VLAN_TCI) : 0;
	c->wqe_counter = htobe16((uint16_t)i);
	c->op_own = MLX5_CQE_RESP_SEND << 4;
}

static bool poll1(struct ibv_wc *wc)
{
	struct rocemu_qp *cache = NULL;

	return rocemu_cq_poll_one(&cq, wc, &cache);
}

/* ibv_poll_cq: the QP by flags_rqpn, byte_len, IP_CSUM_OK on good IPv4 only. */
START_TEST(test_recv_csum_ok)
{
	struct ibv_wc wc;

	raw_recv_cqe(0, MLX5_CQE_L3_OK | MLX5_CQE_L4_OK, MLX5_CQE_L3_HDR_TYPE_IPV4, false);
	raw_recv_cqe(1, MLX5_CQE_L3_OK, MLX5_CQE_L3_HDR_TYPE_IPV4, false);
	raw_recv_cqe(2, MLX5_CQE_L3_OK | MLX5_CQE_L4_OK, MLX5_CQE_L3_HDR_TYPE_IPV6, false);
	ck_assert(poll1(&wc));
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
	ck_assert_uint_eq(wc.qp_num, QPN);
	ck_assert_uint_eq(wc.wr_id, 20);
	ck_assert_uint_eq(wc.byte_len, 1514);
	ck_assert_uint_eq(wc.wc_flags, IBV_WC_IP_CSUM_OK);
	ck_assert(poll1(&wc));
	ck_assert_uint_eq(wc.wr_id, 21);
	ck_assert_uint_eq(wc.wc_flags, 0);	/* L4 not OK */
	rq_wrid[2] = 22;
	ck_assert(poll1(&wc));
	ck_assert_uint_eq(wc.wc_flags, 0);	/* IPv6: mlx5 reports IPv4 only */
	ck_assert_uint_eq(qp.rq.tail, 3);
}
END_TEST

/* Before the modify that sets the port, mlx5 reports no checksum at all. */
START_TEST(test_recv_csum_before_port)
{
	struct ibv_wc wc;

	qp.raw_csum = false;
	raw_recv_cqe(0, MLX5_CQE_L3_OK | MLX5_CQE_L4_OK, MLX5_CQE_L3_HDR_TYPE_IPV4, false);
	ck_assert(poll1(&wc));
	ck_assert_uint_eq(wc.qp_num, QPN);
	ck_assert_uint_eq(wc.wc_flags, 0);
}
END_TEST

/* ibv_cq_ex: the flow tag, the stripped VLAN (0 when none), flags and QP as ibv_poll_cq has them. */
START_TEST(test_recv_cq_ex_tag_and_vlan)
{
	struct ibv_poll_cq_attr attr = { 0 };
	struct ibv_cq_ex *cqx = &cq.ibcq;

	raw_recv_cqe(0, MLX5_CQE_L3_OK | MLX5_CQE_L4_OK, MLX5_CQE_L3_HDR_TYPE_IPV4, true);
	raw_recv_cqe(1, 0, MLX5_CQE_L3_HDR_TYPE_NONE, false);
	cqes[1].sop_drop_qpn = 0;	/* no rule tagged it */
	ck_assert_int_eq(ibv_start_poll(cqx, &attr), 0);
	ck_assert_uint_eq(cqx->wr_id, 20);
	ck_assert_int_eq(ibv_wc_read_opcode(cqx), IBV_WC_RECV);
	ck_assert_uint_eq(ibv_wc_read_qp_num(cqx), QPN);
	ck_assert_uint_eq(ibv_wc_read_byte_len(cqx), 1514);
	ck_assert_uint_eq(ibv_wc_read_wc_flags(cqx), IBV_WC_IP_CSUM_OK);
	ck_assert_uint_eq(ibv_wc_read_flow_tag(cqx), FLOW_TAG);
	ck_assert_uint_eq(ibv_wc_read_cvlan(cqx), VLAN_TCI);
	ck_assert_int_eq(ibv_next_poll(cqx), 0);
	ck_assert_uint_eq(cqx->wr_id, 21);
	ck_assert_uint_eq(ibv_wc_read_flow_tag(cqx), 0);
	ck_assert_uint_eq(ibv_wc_read_cvlan(cqx), 0);
	ck_assert_uint_eq(ibv_wc_read_wc_flags(cqx), 0);
	ck_assert_int_eq(ibv_next_poll(cqx), ENOENT);
	ibv_end_poll(cqx);
	ck_assert_uint_eq(be32toh(dbrec[ROCEMU_CQ_DBR_SET_CI]), 2);
}
END_TEST

/* A TSO WQE's completion is IBV_WC_TSO; its 2 BBs are free again. */
START_TEST(test_tso_send_completion)
{
	struct ibv_wc wc;

	cqes[0].sop_drop_qpn = rocemu_cqe_sop_drop_qpn(MLX5_OPCODE_TSO, QPN);
	cqes[0].wqe_counter = htobe16(0);
	cqes[0].op_own = MLX5_CQE_REQ << 4;
	ck_assert(poll1(&wc));
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, IBV_WC_TSO);
	ck_assert_uint_eq(wc.qp_num, QPN);
	ck_assert_uint_eq(wc.wr_id, 10);
	ck_assert_uint_eq(wc.byte_len, 0);
	ck_assert_uint_eq(qp.sq.tail, 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("poll_raw");
	TCase *tc = tcase_create("raw_cqe");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, rings_open, rings_close);
	tcase_add_test(tc, test_recv_csum_ok);
	tcase_add_test(tc, test_recv_csum_before_port);
	tcase_add_test(tc, test_recv_cq_ex_tag_and_vlan);
	tcase_add_test(tc, test_tso_send_completion);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
