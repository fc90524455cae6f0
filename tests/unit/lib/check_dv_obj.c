/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The mlx5 direct verbs that hand out an emulated device's rings and
 * state (lib/dv/mlx5dv_obj.c, mlx5dv.c, mlx5dv_clock.c): mlx5dv_init_obj's
 * QP, CQ, SRQ, AH and PD, each QP or CQ announced to the daemon once; a
 * program that posts and polls through them as UCX does, its WQE read by
 * the daemon's parser and the daemon's CQE read through mlx5dv.h's
 * inlines (daemon_rings.h); what mlx5dv_query_device answers for the
 * masks asked and only those; mlx5dv_open_device's flags; the raw clock.
 * On a ConnectX-3 the mlx5 ones refuse as libmlx5 for a device not its
 * own and mlx4dv_init_obj (lib/dv/mlx4dv_obj.c) hands out the rings.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"
#include "rocemu/clock.h"
#include "tests/unit/lib/daemon_rings.h"

#define QPN 0x0000f1
#define CQN 0x000031
#define SQ_BBS 8
#define RQ_WQES 4
#define RQ_SHIFT 5
#define RQ_OFFSET (SQ_BBS * ROCEMU_WQE_BB)
#define DBREC_OFFSET (RQ_OFFSET + (RQ_WQES << RQ_SHIFT))
#define BF_OFFSET (DBREC_OFFSET + ROCEMU_WQE_BB)
#define BF_SIZE (2 * ROCEMU_WQE_BB)
#define MAP_SIZE (BF_OFFSET + BF_SIZE)
#define NCQE 4
#define CQ_DBREC_OFFSET (NCQE * sizeof(struct mlx5_cqe64))
#define LKEY 0x1111
#define LADDR 0x600000ull

static struct rocemu_device device;
static struct ibv_device ibdev;
static struct rocemu_context rctx;
static struct ibv_context *const ctx = &rctx.vctx.context;
static struct rocemu_qp qp;
static struct rocemu_cq cq;
static _Alignas(ROCEMU_WQE_BB) char map[MAP_SIZE];
static _Alignas(ROCEMU_WQE_BB) char cq_map[CQ_DBREC_OFFSET + ROCEMU_WQE_BB];
static struct daemon_qp *dqp;

/* The daemon's answers to DIRECT_DOORBELLS: counted, failing with direct_err when set. */
static int direct_calls, direct_err;
static struct rocemu_direct_doorbells_req direct_req;
static struct ibv_context opened;

struct rocemu_device *rocemu_device_of(struct ibv_device *dev)
{
	return dev == &ibdev ? &device : NULL;
}

/* Not reached: every object here is the emulated device's. */
void *rocemu_real(enum rocemu_real_fn fn)
{
	(void)fn;
	abort();
}

int rocemu_conn_call_fd(struct rocemu_conn *conn, enum rocemu_ctrl_op op, const void *req,
			void *resp, int send_fd)
{
	const struct rocemu_direct_doorbells_req *r = req;

	ck_assert_ptr_eq(conn, &rctx.conn);
	ck_assert_int_eq(op, ROCEMU_OP_DIRECT_DOORBELLS);
	ck_assert_ptr_null(resp);
	/* A userfaultfd comes with the pages it covers, whole; none comes with none. */
	ck_assert_int_eq(send_fd >= 0, r->wp_len > 0);
	ck_assert_uint_eq(r->wp_addr % (uint64_t)sysconf(_SC_PAGESIZE), 0);
	ck_assert_uint_eq(r->wp_len % (uint64_t)sysconf(_SC_PAGESIZE), 0);
	direct_calls++;
	memcpy(&direct_req, req, sizeof(direct_req));
	return direct_err;
}

/* Not reached: the program rings its own doorbells here, never through the shim's poster. */
void rocemu_ctx_doorbell(struct rocemu_context *c)
{
	(void)c;
	abort();
}

/* lib/verbs/dm.c's, not reached: no device memory here. */
int rocemu_dm_dv(struct ibv_dm *dm, struct mlx5dv_dm *out)
{
	(void)dm;
	(void)out;
	abort();
}

/* lib/verbs/device.c's open, which asks the daemon: where mlx5dv_open_device ends up. */
struct ibv_context *ibv_open_device(struct ibv_device *dev)
{
	ck_assert_ptr_eq(dev, &ibdev);
	return &opened;
}

static void objs_open(void)
{
	memset(&rctx, 0, sizeof(rctx));
	memset(&qp, 0, sizeof(qp));
	memset(&cq, 0, sizeof(cq));
	memset(map, 0, sizeof(map));
	memset(cq_map, 0, sizeof(cq_map));
	direct_calls = direct_err = 0;
	device.info.model = ROCEMU_MODEL_CX5;
	ctx->device = &ibdev;
	qp.qpx.qp_base.context = ctx;
	qp.qpx.qp_base.qp_type = IBV_QPT_RC;
	qp.type = IBV_QPT_RC;
	qp.qpn = QPN;
	qp.cap = (struct ibv_qp_cap){ .max_send_sge = 1, .max_recv_sge = 2 };
	qp.layout = (struct rocemu_qp_layout){
		.qpn = QPN, .sq_wqe_cnt = SQ_BBS, .rq_wqe_cnt = RQ_WQES, .rq_wqe_shift = RQ_SHIFT,
		.size = MAP_SIZE, .sq_offset = 0, .rq_offset = RQ_OFFSET,
		.dbrec_offset = DBREC_OFFSET, .bf_offset = BF_OFFSET, .bf_size = BF_SIZE,
	};
	qp.map = map;
	ck_assert_int_eq(rocemu_qp_queues_init(&qp), 0);
	dqp = daemon_qp_new(map, &qp.layout, IBV_QPT_RC);
	cq.ibcq.context = ctx;
	cq.cqn = CQN;
	cq.ncqe = NCQE;
	cq.cqe_size = sizeof(struct mlx5_cqe64);
	cq.buf = cq_map;
	cq.dbrec = (__be32 *)(cq_map + CQ_DBREC_OFFSET);
}

static void objs_close(void)
{
	daemon_qp_free(dqp);
	rocemu_qp_queues_free(&qp);
}

/* The QP's rings as mlx5dv_get_qp gives them; a program's WQE there is what the daemon reads. */
START_TEST(test_qp_rings_handed_out)
{
	struct mlx5dv_qp dv = { .comp_mask = MLX5DV_QP_MASK_RAW_QP_HANDLES };
	struct mlx5dv_obj obj = { .qp = { .in = &qp.qpx.qp_base, .out = &dv } };
	struct mlx5_wqe_ctrl_seg *ctrl;
	struct mlx5_wqe_data_seg *data;
	struct daemon_send_wqe w;

	ck_assert_int_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP), 0);
	ck_assert_ptr_eq(dv.dbrec, map + DBREC_OFFSET);
	ck_assert_ptr_eq(dv.sq.buf, map);
	ck_assert_uint_eq(dv.sq.wqe_cnt, SQ_BBS);
	ck_assert_uint_eq(dv.sq.stride, MLX5_SEND_WQE_BB);
	ck_assert_ptr_eq(dv.rq.buf, map + RQ_OFFSET);
	ck_assert_uint_eq(dv.rq.wqe_cnt, RQ_WQES);
	ck_assert_uint_eq(dv.rq.stride, 1u << RQ_SHIFT);
	ck_assert_ptr_eq(dv.bf.reg, map + BF_OFFSET);
	ck_assert_uint_eq(dv.bf.size, BF_SIZE / 2);
	ck_assert_uint_eq(dv.comp_mask, MLX5DV_QP_MASK_RAW_QP_HANDLES);
	ck_assert_uint_eq(dv.sqn | dv.rqn | dv.tisn | dv.tirn, 0);
	/* The daemon heard once that this QP rings unannounced. */
	ck_assert_int_eq(direct_calls, 1);
	ck_assert_int_eq(direct_req.kind, ROCEMU_DIRECT_QP);
	ck_assert_uint_eq(direct_req.handle, QPN);
	ck_assert_int_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP), 0);
	ck_assert_int_eq(direct_calls, 1);

	/* A SEND written by the program with mlx5dv.h's setters, then its doorbell record. */
	ctrl = (struct mlx5_wqe_ctrl_seg *)dv.sq.buf;
	data = (struct mlx5_wqe_data_seg *)(ctrl + 1);
	mlx5dv_set_ctrl_seg(ctrl, 0, MLX5_OPCODE_SEND, 0, QPN, MLX5_WQE_CTRL_CQ_UPDATE, 2, 0, 0);
	mlx5dv_set_data_seg(data, 48, LKEY, LADDR);
	dv.dbrec[MLX5_SND_DBR] = htobe32(1);
	ck_assert_int_eq(daemon_sq_posted(dqp, 0), 1);
	ck_assert_int_eq(daemon_parse_send(dqp, 0, 1, &w), 0);
	ck_assert_uint_eq(w.opcode, MLX5_OPCODE_SEND);
	ck_assert(w.signaled);
	ck_assert_uint_eq(w.num_sge, 1);
	ck_assert_uint_eq(w.sge[0].addr, LADDR);
	ck_assert_uint_eq(w.length, 48);
}
END_TEST

/*
 * A RAW_PACKET QP's rings are handed out alike, its raw handles its number;
 * a DPDK-style program writes the Ethernet segment itself (mlx5dv_set_eth_seg)
 * and the daemon finds the data segment after it.
 */
START_TEST(test_raw_qp_rings_handed_out)
{
	struct mlx5dv_qp dv = { .comp_mask = MLX5DV_QP_MASK_RAW_QP_HANDLES };
	struct mlx5dv_obj obj = { .qp = { .in = &qp.qpx.qp_base, .out = &dv } };
	uint8_t frame[ROCEMU_ETH_INLINE_HEADER] = { 0x02, 0, 0, 0, 0, 0x01 };
	struct mlx5_wqe_ctrl_seg *ctrl;
	struct mlx5_wqe_eth_seg *eth;
	struct daemon_send_wqe w;

	daemon_qp_free(dqp);
	qp.qpx.qp_base.qp_type = IBV_QPT_RAW_PACKET;
	qp.type = IBV_QPT_RAW_PACKET;
	dqp = daemon_qp_new(map, &qp.layout, IBV_QPT_RAW_PACKET);
	ck_assert_int_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP), 0);
	ck_assert_ptr_eq(dv.sq.buf, map);
	ck_assert_ptr_eq(dv.rq.buf, map + RQ_OFFSET);
	ck_assert_uint_eq(dv.comp_mask, MLX5DV_QP_MASK_RAW_QP_HANDLES);
	ck_assert_uint_eq(dv.sqn, QPN);
	ck_assert_uint_eq(dv.rqn, QPN);
	ck_assert_uint_eq(dv.tisn, QPN);
	ck_assert_uint_eq(dv.tirn, QPN);
	ctrl = (struct mlx5_wqe_ctrl_seg *)dv.sq.buf;
	eth = (struct mlx5_wqe_eth_seg *)(ctrl + 1);
	mlx5dv_set_ctrl_seg(ctrl, 0, MLX5_OPCODE_SEND, 0, QPN, MLX5_WQE_CTRL_CQ_UPDATE, 4, 0, 0);
	memset(eth, 0, sizeof(*eth));
	mlx5dv_set_eth_seg(eth, MLX5_ETH_WQE_L3_CSUM, 0, sizeof(frame), frame);
	mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(eth + 1), 46, LKEY, LADDR);
	dv.dbrec[MLX5_SND_DBR] = htobe32(1);
	ck_assert_int_eq(daemon_parse_send(dqp, 0, 1, &w), 0);
	ck_assert_uint_eq(w.opcode, MLX5_OPCODE_SEND);
	ck_assert_uint_eq(w.num_sge, 1);
	ck_assert_uint_eq(w.sge[0].addr, LADDR);
	ck_assert_uint_eq(w.sge[0].length, 46);
}
END_TEST

/* The daemon's answer to the announcement fails the call, and it is asked again next time. */
START_TEST(test_qp_announce_error)
{
	struct mlx5dv_qp dv = { 0 };
	struct mlx5dv_obj obj = { .qp = { .in = &qp.qpx.qp_base, .out = &dv } };

	direct_err = -ENOMEM;
	ck_assert_int_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP), ENOMEM);
	direct_err = 0;
	ck_assert_int_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP), 0);
	ck_assert_int_eq(direct_calls, 2);
}
END_TEST

/* The CQ as mlx5dv_get_cq gives it: the program owns its index and reads CQEs by mlx5dv.h. */
START_TEST(test_cq_handed_out)
{
	struct mlx5dv_cq dv = { .comp_mask = 1 };
	struct mlx5dv_obj obj = { .cq = { .in = ibv_cq_ex_to_cq(&cq.ibcq), .out = &dv } };
	struct daemon_cq *dcq = daemon_cq_new(cq_map, cq_map + CQ_DBREC_OFFSET, sizeof(struct mlx5_cqe64),
					      NCQE);
	const struct daemon_cqe done = { .kind = DAEMON_CQE_SEND_DONE,
					 .wqe_opcode = MLX5_OPCODE_RDMA_WRITE, .qpn = QPN,
					 .wqe_counter = 0 };
	struct mlx5_cqe64 *cqe;

	ck_assert_int_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ), 0);
	ck_assert_uint_eq(dv.comp_mask, 0);
	ck_assert_uint_eq(dv.cqn, CQN);
	ck_assert_uint_eq(dv.cqe_cnt, NCQE);
	ck_assert_uint_eq(dv.cqe_size, sizeof(struct mlx5_cqe64));
	ck_assert_ptr_eq(dv.buf, cq_map);
	ck_assert_ptr_eq(dv.dbrec, cq.dbrec);
	ck_assert_ptr_nonnull(dv.cq_uar);
	ck_assert(cq.dv_owned);
	ck_assert_int_eq(direct_req.kind, ROCEMU_DIRECT_CQ);
	ck_assert_uint_eq(direct_req.handle, CQN);

	/* Before the daemon writes, the entry is hardware's; after, the program's of the first pass. */
	cqe = (struct mlx5_cqe64 *)dv.buf;
	ck_assert_uint_eq(mlx5dv_get_cqe_opcode(cqe), MLX5_CQE_INVALID);
	ck_assert(daemon_cqe_write(dcq, &done));
	ck_assert_uint_eq(mlx5dv_get_cqe_opcode(cqe), MLX5_CQE_REQ);
	ck_assert_uint_eq(mlx5dv_get_cqe_owner(cqe), 0);
	ck_assert_uint_eq(be32toh(cqe->sop_drop_qpn) & 0xffffff, QPN);
	ck_assert_uint_eq(be32toh(cqe->sop_drop_qpn) >> 24, MLX5_OPCODE_RDMA_WRITE);
	daemon_cq_free(dcq);
}
END_TEST

/* SRQ, AH and PD as mlx5 gives them; the SRQ number only when asked. */
START_TEST(test_srq_ah_pd)
{
	struct rocemu_srq srq;
	struct rocemu_ah ah;
	struct rocemu_pd pd = { .ibpd = { .context = ctx }, .pdn = 9 };
	struct mlx5dv_srq dsrq = { .comp_mask = MLX5DV_SRQ_MASK_SRQN };
	struct mlx5dv_ah dah;
	struct mlx5dv_pd dpd;
	__be32 db;
	struct mlx5dv_obj obj = { .srq = { .in = &srq.ibsrq, .out = &dsrq },
				  .ah = { .in = &ah.ibah, .out = &dah },
				  .pd = { .in = &pd.ibpd, .out = &dpd } };

	memset(&srq, 0, sizeof(srq));
	memset(&ah, 0, sizeof(ah));
	srq.ibsrq.context = ctx;
	srq.srqn = 0x44;
	srq.buf = map;
	srq.db = &db;
	srq.layout.wqe_shift = 6;
	srq.head = 2;
	srq.tail = 3;
	ah.ibah.context = ctx;
	ck_assert_int_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_SRQ | MLX5DV_OBJ_AH | MLX5DV_OBJ_PD), 0);
	ck_assert_ptr_eq(dsrq.buf, map);
	ck_assert_ptr_eq(dsrq.dbrec, &db);
	ck_assert_uint_eq(dsrq.stride, 64);
	ck_assert_uint_eq(dsrq.head, 2);
	ck_assert_uint_eq(dsrq.tail, 3);
	ck_assert_uint_eq(dsrq.srqn, 0x44);
	ck_assert_uint_eq(dsrq.comp_mask, MLX5DV_SRQ_MASK_SRQN);
	ck_assert_ptr_eq(dah.av, &ah.av);
	ck_assert_uint_eq(dpd.pdn, 9);
	ck_assert_int_eq(direct_calls, 0);	/* only QPs and CQs ring unannounced */
	dsrq.comp_mask = 0;
	dsrq.srqn = 0;
	ck_assert_int_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_SRQ), 0);
	ck_assert_uint_eq(dsrq.srqn, 0);
}
END_TEST

/* No object: EINVAL. */
START_TEST(test_init_obj_refusals)
{
	struct ibv_wq wq = { .context = ctx };
	struct mlx5dv_rwq drwq;
	struct mlx5dv_obj obj = { .rwq = { .in = &wq, .out = &drwq } };

	ck_assert_int_eq(mlx5dv_init_obj(&obj, 0), EINVAL);
}
END_TEST

/* A WQ: its ring, doorbell record, WQE count and stride (mlx5dv_get_rwq). */
START_TEST(test_init_obj_rwq)
{
	__be32 dbrec = 0;
	char ring[4 * 64];
	struct rocemu_wq wq = {
		.ibwq = { .context = ctx }, .dbrec = &dbrec,
		.rq = { .buf = ring, .wqe_cnt = 4, .wqe_shift = 6 },
	};
	struct mlx5dv_rwq drwq = { .comp_mask = 7 };
	struct mlx5dv_obj obj = { .rwq = { .in = &wq.ibwq, .out = &drwq } };

	ck_assert_int_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_RWQ), 0);
	ck_assert_ptr_eq(drwq.buf, ring);
	ck_assert_ptr_eq(drwq.dbrec, &dbrec);
	ck_assert_uint_eq(drwq.wqe_cnt, 4);
	ck_assert_uint_eq(drwq.stride, 64);
	ck_assert_uint_eq(drwq.comp_mask, 0);
}
END_TEST

/* mlx5dv_query_device: each mask asked answered (and said so), the rest of the struct left alone. */
START_TEST(test_query_device)
{
	struct mlx5dv_context attrs;

	memset(&attrs, 0xee, sizeof(attrs));
	attrs.comp_mask = MLX5DV_CONTEXT_MASK_DCI_STREAMS | MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE |
			  MLX5DV_CONTEXT_MASK_DC_ODP_CAPS | MLX5DV_CONTEXT_MASK_HCA_CORE_CLOCK |
			  (1ull << 62);
	ck_assert_int_eq(mlx5dv_query_device(ctx, &attrs), 0);
	ck_assert_uint_eq(attrs.comp_mask, MLX5DV_CONTEXT_MASK_DCI_STREAMS |
					   MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE |
					   MLX5DV_CONTEXT_MASK_DC_ODP_CAPS);
	ck_assert_uint_eq(attrs.version, 0);
	ck_assert_uint_eq(attrs.flags, MLX5DV_CONTEXT_FLAGS_PACKET_BASED_CREDIT_MODE);
	ck_assert_uint_eq(attrs.dci_streams_caps.max_log_num_concurent, ROCEMU_DCI_MAX_LOG_STREAMS);
	ck_assert_uint_eq(attrs.dci_streams_caps.max_log_num_errored, ROCEMU_DCI_MAX_LOG_STREAMS);
	ck_assert_uint_eq(attrs.max_clock_info_update_nsec, rocemu_clock_info_update_nsec());
	ck_assert_uint_gt(attrs.max_clock_info_update_nsec, 0);
	ck_assert_uint_eq(attrs.dc_odp_caps, ROCEMU_SRQ_TRANSPORT_ODP_CAPS);
	/* Not asked: untouched. */
	ck_assert_uint_eq(attrs.tunnel_offloads_caps, 0xeeeeeeee);
	ck_assert_uint_eq(attrs.max_dynamic_bfregs, 0xeeeeeeee);
	ck_assert_uint_eq(attrs.cqe_comp_caps.max_num, 0xeeeeeeee);
	/* Asked: none of compression, striding RQ or tunnels. */
	attrs.comp_mask = MLX5DV_CONTEXT_MASK_CQE_COMPRESION | MLX5DV_CONTEXT_MASK_STRIDING_RQ |
			  MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS;
	ck_assert_int_eq(mlx5dv_query_device(ctx, &attrs), 0);
	ck_assert_uint_eq(attrs.cqe_comp_caps.max_num, 0);
	ck_assert_uint_eq(attrs.striding_rq_caps.supported_qpts, 0);
	ck_assert_uint_eq(attrs.tunnel_offloads_caps, 0);
}
END_TEST

/* mlx5dv_open_device: no flags opens as ibv_open_device; DevX is refused, unknown flags EINVAL. */
START_TEST(test_open_device)
{
	struct mlx5dv_context_attr attr = { 0 };

	ck_assert_ptr_eq(mlx5dv_open_device(&ibdev, NULL), &opened);
	ck_assert_ptr_eq(mlx5dv_open_device(&ibdev, &attr), &opened);
	attr.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
	errno = 0;
	ck_assert_ptr_null(mlx5dv_open_device(&ibdev, &attr));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	attr.flags = 1u << 20;
	errno = 0;
	ck_assert_ptr_null(mlx5dv_open_device(&ibdev, &attr));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* ibv_query_rt_values_ex: the raw clock in tv_nsec, as mlx5; other values EINVAL. */
START_TEST(test_query_rt_values)
{
	struct ibv_values_ex values = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	uint64_t before = rocemu_clock_now(), after;

	ck_assert_int_eq(rocemu_query_rt_values_op(ctx, &values), 0);
	after = rocemu_clock_now();
	ck_assert_int_eq(values.raw_clock.tv_sec, 0);
	ck_assert_uint_ge((uint64_t)values.raw_clock.tv_nsec, before);
	ck_assert_uint_le((uint64_t)values.raw_clock.tv_nsec, after);
	values.comp_mask = 1u << 5;
	ck_assert_int_eq(rocemu_query_rt_values_op(ctx, &values), EINVAL);
}
END_TEST

/* A ConnectX-3: mlx5dv fails as for a device not libmlx5's; mlx4dv_init_obj gives the rings. */
START_TEST(test_cx3_model)
{
	struct mlx5dv_context attrs = { 0 };
	struct mlx5dv_qp dv5 = { 0 };
	struct mlx5dv_obj obj5 = { .qp = { .in = &qp.qpx.qp_base, .out = &dv5 } };
	struct mlx4dv_qp dv_qp = { .comp_mask = MLX4DV_QP_MASK_UAR_MMAP_OFFSET };
	struct mlx4dv_cq dv_cq = { .comp_mask = MLX4DV_CQ_MASK_UAR };
	struct mlx4dv_obj obj = { .qp = { .in = &qp.qpx.qp_base, .out = &dv_qp },
				  .cq = { .in = ibv_cq_ex_to_cq(&cq.ibcq), .out = &dv_cq } };

	ck_assert_int_eq(mlx4dv_init_obj(&obj, MLX4DV_OBJ_QP), EOPNOTSUPP);
	device.info.model = ROCEMU_MODEL_CX3;
	ck_assert(!mlx5dv_is_supported(&ibdev));
	errno = 0;
	ck_assert_ptr_null(mlx5dv_open_device(&ibdev, NULL));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_int_eq(mlx5dv_query_device(ctx, &attrs), EOPNOTSUPP);
	ck_assert_int_eq(mlx5dv_init_obj(&obj5, MLX5DV_OBJ_QP), EOPNOTSUPP);
	ck_assert_int_eq(direct_calls, 0);

	qp.layout.sq_wqe_shift = 6;
	cq.arm_sn = 1;
	ck_assert_int_eq(mlx4dv_init_obj(&obj, MLX4DV_OBJ_QP | MLX4DV_OBJ_CQ), 0);
	ck_assert_ptr_eq(dv_qp.buf.buf, map);
	ck_assert_uint_eq(dv_qp.buf.length, DBREC_OFFSET);
	ck_assert_int_eq(dv_qp.sq.offset, 0);
	ck_assert_uint_eq(dv_qp.sq.wqe_cnt, SQ_BBS);
	ck_assert_int_eq(dv_qp.sq.wqe_shift, 6);
	ck_assert_int_eq(dv_qp.rq.offset, RQ_OFFSET);
	ck_assert_uint_eq(dv_qp.rq.wqe_cnt, RQ_WQES);
	ck_assert_int_eq(dv_qp.rq.wqe_shift, RQ_SHIFT);
	ck_assert_ptr_eq(dv_qp.rdb, map + DBREC_OFFSET);
	ck_assert_ptr_eq(dv_qp.sdb, map + BF_OFFSET + MLX4_SEND_DOORBELL);
	ck_assert_uint_eq(dv_qp.doorbell_qpn, htobe32(QPN << 8));
	ck_assert_uint_eq(dv_qp.comp_mask, MLX4DV_QP_MASK_UAR_MMAP_OFFSET);
	ck_assert_ptr_eq(dv_cq.buf.buf, cq_map);
	ck_assert_uint_eq(dv_cq.buf.length, NCQE * sizeof(struct mlx5_cqe64));
	ck_assert_uint_eq(dv_cq.cqe_cnt, NCQE);
	ck_assert_uint_eq(dv_cq.cqn, CQN);
	ck_assert_ptr_eq(dv_cq.set_ci_db, cq.dbrec);
	ck_assert_ptr_eq(dv_cq.arm_db, cq.dbrec + 1);
	ck_assert_int_eq(dv_cq.arm_sn, 1);
	ck_assert_uint_eq(dv_cq.comp_mask, MLX4DV_CQ_MASK_UAR);
	ck_assert_ptr_nonnull(dv_cq.cq_uar);
	/* Both named to the daemon, once; the CQ is the program's from now on. */
	ck_assert_int_eq(direct_calls, 2);
	ck_assert(cq.dv_owned);
	ck_assert_int_eq(mlx4dv_init_obj(&obj, MLX4DV_OBJ_QP | MLX4DV_OBJ_CQ), 0);
	ck_assert_int_eq(direct_calls, 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dv_obj");
	TCase *tc = tcase_create("objects");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, objs_open, objs_close);
	tcase_add_test(tc, test_qp_rings_handed_out);
	tcase_add_test(tc, test_raw_qp_rings_handed_out);
	tcase_add_test(tc, test_qp_announce_error);
	tcase_add_test(tc, test_cq_handed_out);
	tcase_add_test(tc, test_srq_ah_pd);
	tcase_add_test(tc, test_init_obj_refusals);
	tcase_add_test(tc, test_init_obj_rwq);
	tcase_add_test(tc, test_query_device);
	tcase_add_test(tc, test_open_device);
	tcase_add_test(tc, test_query_rt_values);
	tcase_add_test(tc, test_cx3_model);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
