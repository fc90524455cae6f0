/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A DCI's send WQEs (lib/dv/mlx5dv_dc.c's mlx5dv_wr_set_dc_addr and
 * _stream setters, over lib/datapath/wr.c and wqe.c): the datagram
 * segment with the DCT's number and access key, the stream in ctrl, and
 * the raddr segment starting the second BB, also where that BB is the
 * ring's first; read through mlx5dv.h's structs and by the daemon's
 * parser and DC peek (daemon_rings.h).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"
#include "tests/unit/lib/daemon_rings.h"

#define QPN 0x0000dc
#define SQ_BBS 8
#define MAX_SGE 2
#define MAX_INLINE 32
#define DBREC_OFFSET (SQ_BBS * ROCEMU_WQE_BB)
#define BF_OFFSET (DBREC_OFFSET + ROCEMU_WQE_BB)
#define BF_SIZE (2 * ROCEMU_WQE_BB)
#define MAP_SIZE (BF_OFFSET + BF_SIZE)

#define LKEY 0x1111
#define RKEY 0x2222
#define RADDR 0x7f0000001000ull
#define LADDR 0x600000ull
#define DCTN 0x000321
#define DC_KEY 0x0123456789abcdefull

static struct rocemu_context rctx;
static struct rocemu_qp qp;
static struct ibv_qp_ex *const qpx = &qp.qpx;
static struct mlx5dv_qp_ex *const dvx = &qp.dv_qpx;
static _Alignas(ROCEMU_WQE_BB) char map[MAP_SIZE];
static struct daemon_qp *dqp;
static struct rocemu_ah ah;

/* The doorbell's last step, telling the daemon: nothing listens, the test reads the ring. */
void rocemu_ctx_doorbell(struct rocemu_context *ctx)
{
	ck_assert_ptr_eq(ctx, &rctx);
}

/* Not reached: mlx5dv_dc.c's create and stream reset are check_dv_create's, these its callees. */
struct ibv_qp *rocemu_create_qp_dc(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
				   uint32_t vendor_flags, const struct rocemu_dc_attr *dc)
{
	(void)context;
	(void)attr;
	(void)vendor_flags;
	(void)dc;
	abort();
}

struct rocemu_device *rocemu_device_of(struct ibv_device *dev)
{
	(void)dev;
	abort();
}

int rocemu_conn_call(struct rocemu_conn *conn, enum rocemu_ctrl_op op, const void *req,
		     void *resp, int *fds, int nfds)
{
	(void)conn;
	(void)op;
	(void)req;
	(void)resp;
	(void)fds;
	(void)nfds;
	abort();
}

void *rocemu_real(enum rocemu_real_fn fn)
{
	(void)fn;
	abort();
}

/* A DCI in RTS (IBV_QPT_DRIVER to the application), its setters those of mlx5dv_qp_ex, and an AH. */
static void dci_open(void)
{
	memset(&rctx, 0, sizeof(rctx));
	memset(&qp, 0, sizeof(qp));
	memset(map, 0, sizeof(map));
	qpx->qp_base.context = &rctx.vctx.context;
	qpx->qp_base.qp_type = IBV_QPT_DRIVER;
	qp.type = ROCEMU_QPT_DCI;
	qp.qpn = QPN;
	qp.cap = (struct ibv_qp_cap){ .max_send_sge = MAX_SGE, .max_inline_data = MAX_INLINE };
	qp.layout = (struct rocemu_qp_layout){
		.qpn = QPN, .sq_wqe_cnt = SQ_BBS, .size = MAP_SIZE, .sq_offset = 0,
		.dbrec_offset = DBREC_OFFSET, .bf_offset = BF_OFFSET, .bf_size = BF_SIZE,
	};
	qp.map = map;
	ck_assert_int_eq(rocemu_qp_queues_init(&qp), 0);
	rocemu_qp_queues_state(&qp, IBV_QPS_RTS);
	rocemu_qp_wr_ops_init(&qp);
	rocemu_dci_wr_ops_init(&qp);
	dqp = daemon_qp_new(map, &qp.layout, ROCEMU_QPT_DCI);
	memset(&ah, 0, sizeof(ah));
	for (unsigned int i = 0; i < sizeof(ah.av.rgid); i++)
		ah.av.rgid[i] = (uint8_t)(0x80 + i);
}

static void dci_close(void)
{
	daemon_qp_free(dqp);
	rocemu_qp_queues_free(&qp);
}

static const void *seg_at(uint32_t bb, unsigned int n)
{
	size_t off = (size_t)(bb % SQ_BBS) * ROCEMU_WQE_BB + (size_t)n * ROCEMU_WQE_SEG;

	return map + off % ((size_t)SQ_BBS * ROCEMU_WQE_BB);
}

/* The datagram segment as mlx5_send_wr_set_dc_addr writes it: the DCT, its key, the AH's vector. */
static void assert_datagram(uint32_t bb)
{
	const struct mlx5_wqe_datagram_seg *d = seg_at(bb, 1);

	ck_assert_uint_eq(be32toh(d->av.dqp_dct), DCTN | MLX5_EXTENDED_UD_AV);
	ck_assert_uint_eq(be64toh(d->av.key.dc_key), DC_KEY);
	ck_assert_mem_eq(d->av.rgid, ah.av.rgid, sizeof(ah.av.rgid));
}

/* A SEND: ctrl and datagram fill the first BB, the data segment starts the second. */
START_TEST(test_dci_send)
{
	const struct mlx5_wqe_ctrl_seg *ctrl = seg_at(0, 0);
	const struct mlx5_wqe_data_seg *data = seg_at(0, 4);
	struct daemon_send_wqe w;
	uint16_t stream = 0xffff;

	qpx->wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	qpx->wr_send(qpx);
	dvx->wr_set_dc_addr(dvx, &ah.ibah, DCTN, DC_KEY);
	qpx->wr_set_sge(qpx, LKEY, LADDR, 64);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);

	ck_assert_uint_eq(be32toh(ctrl->qpn_ds), (uint32_t)QPN << 8 | 5);
	ck_assert_uint_eq(be32toh(ctrl->opmod_idx_opcode) & 0xff, MLX5_OPCODE_SEND);
	ck_assert_uint_eq(ctrl->dci_stream_channel_id, 0);
	assert_datagram(0);
	ck_assert_uint_eq(be32toh(data->byte_count), 64);
	ck_assert_uint_eq(be64toh(data->addr), LADDR);
	ck_assert_uint_eq(qp.sq.cur_post, 2);

	ck_assert_int_eq(daemon_parse_send(dqp, 0, (uint32_t)daemon_sq_posted(dqp, 0), &w), 0);
	ck_assert_uint_eq(w.bbs, 2);
	ck_assert_uint_eq(w.dqpn, DCTN);
	ck_assert_uint_eq(w.dc_key, DC_KEY);
	ck_assert_mem_eq(w.rgid, ah.av.rgid, sizeof(w.rgid));
	ck_assert_uint_eq(w.num_sge, 1);
	ck_assert_uint_eq(w.length, 64);
	daemon_peek_dc(dqp, 0, &w, &stream);
	ck_assert_uint_eq(w.dqpn, DCTN);
	ck_assert_uint_eq(w.dc_key, DC_KEY);
	ck_assert_uint_eq(stream, 0);
}
END_TEST

/* The stream goes in ctrl's dci_stream_channel_id, where the DC engine peeks for it. */
START_TEST(test_dci_stream)
{
	const struct mlx5_wqe_ctrl_seg *ctrl = seg_at(0, 0);
	struct daemon_send_wqe w;
	uint16_t stream = 0;

	qpx->wr_start(qpx);
	qpx->wr_send_imm(qpx, htobe32(0x5151));
	dvx->wr_set_dc_addr_stream(dvx, &ah.ibah, DCTN, DC_KEY, 0x2a);
	qpx->wr_set_sge(qpx, LKEY, LADDR, 8);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);
	ck_assert_uint_eq(be16toh(ctrl->dci_stream_channel_id), 0x2a);
	ck_assert_uint_eq(be32toh(ctrl->imm), 0x5151);
	daemon_peek_dc(dqp, 0, &w, &stream);
	ck_assert_uint_eq(stream, 0x2a);
	ck_assert_uint_eq(w.dqpn, DCTN);
}
END_TEST

/* An RDMA WRITE at the ring's last BB: its raddr segment opens the second BB, which is BB 0. */
START_TEST(test_dci_raddr_wraps_to_bb_0)
{
	const struct mlx5_wqe_raddr_seg *r;
	struct daemon_send_wqe w;

	/* Three SENDs of two BBs and their completion: the WRITE starts at BB 6 ... */
	for (int i = 0; i < 3; i++) {
		qpx->wr_start(qpx);
		qpx->wr_send(qpx);
		dvx->wr_set_dc_addr(dvx, &ah.ibah, DCTN, DC_KEY);
		qpx->wr_set_sge(qpx, LKEY, LADDR, 8);
		ck_assert_int_eq(qpx->wr_complete(qpx), 0);
	}
	/* ... and one of one BB would leave it at 7: a SEND without data (ctrl and datagram). */
	qpx->wr_start(qpx);
	qpx->wr_send(qpx);
	dvx->wr_set_dc_addr(dvx, &ah.ibah, DCTN, DC_KEY);
	qpx->wr_set_sge_list(qpx, 0, NULL);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);
	ck_assert_uint_eq(qp.sq.cur_post, SQ_BBS - 1);
	__atomic_store_n(&qp.sq.tail, SQ_BBS - 1, __ATOMIC_RELEASE);	/* as the poller frees them */

	qpx->wr_start(qpx);
	qpx->wr_rdma_write(qpx, RKEY, RADDR);
	dvx->wr_set_dc_addr(dvx, &ah.ibah, DCTN, DC_KEY);
	qpx->wr_set_sge(qpx, LKEY, LADDR, 100);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);
	ck_assert_uint_eq(qp.sq.cur_post, SQ_BBS + 1);
	assert_datagram(SQ_BBS - 1);
	r = (const struct mlx5_wqe_raddr_seg *)map;
	ck_assert_uint_eq(be64toh(r->raddr), RADDR);
	ck_assert_uint_eq(be32toh(r->rkey), RKEY);
	ck_assert_uint_eq(be32toh(((const struct mlx5_wqe_data_seg *)(r + 1))->byte_count), 100);

	ck_assert_int_eq(daemon_parse_send(dqp, SQ_BBS - 1,
					   (uint32_t)daemon_sq_posted(dqp, SQ_BBS - 1), &w), 0);
	ck_assert_uint_eq(w.opcode, MLX5_OPCODE_RDMA_WRITE);
	ck_assert_uint_eq(w.raddr, RADDR);
	ck_assert_uint_eq(w.rkey, RKEY);
	ck_assert_uint_eq(w.dqpn, DCTN);
	ck_assert_uint_eq(w.length, 100);
}
END_TEST

/* Each WQE needs its DC address: one without is EINVAL, and the batch is dropped. */
START_TEST(test_dci_address_for_each_wqe)
{
	qpx->wr_start(qpx);
	qpx->wr_send(qpx);
	dvx->wr_set_dc_addr(dvx, &ah.ibah, DCTN, DC_KEY);
	qpx->wr_set_sge(qpx, LKEY, LADDR, 8);
	qpx->wr_send(qpx);
	qpx->wr_set_sge(qpx, LKEY, LADDR, 8);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	ck_assert_uint_eq(qp.sq.cur_post, 0);
	ck_assert_uint_eq(qp.dbrec[MLX5_SND_DBR], 0);
}
END_TEST

/* DC has no SEND with invalidate: EINVAL. */
START_TEST(test_dci_send_inv_refused)
{
	qpx->wr_start(qpx);
	qpx->wr_send_inv(qpx, 0x1234);
	dvx->wr_set_dc_addr(dvx, &ah.ibah, DCTN, DC_KEY);
	qpx->wr_set_sge(qpx, LKEY, LADDR, 8);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	ck_assert_uint_eq(qp.sq.cur_post, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dv_dc");
	TCase *tc = tcase_create("dci");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, dci_open, dci_close);
	tcase_add_test(tc, test_dci_send);
	tcase_add_test(tc, test_dci_stream);
	tcase_add_test(tc, test_dci_raddr_wraps_to_bb_0);
	tcase_add_test(tc, test_dci_address_for_each_wqe);
	tcase_add_test(tc, test_dci_send_inv_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
