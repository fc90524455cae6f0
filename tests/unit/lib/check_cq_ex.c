/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Extended polling of ibv_cq_ex (lib/datapath/cq_ex.c, over poll.c's
 * parser) and scatter to CQE on the poller's side (lib/datapath/cqe_scatter.c),
 * over CQEs the daemon's own writer puts in the ring (daemon_rings.h) for
 * WQEs the shim's own poster wrote (lib/datapath/post.c, wqe.c): every
 * read_*() getter of requester, responder and error completions, in 64-
 * and 128-byte CQEs, what start_poll, next_poll and end_poll do with the
 * lock and the consumer index, and data carried in the CQE copied to the
 * buffers of the WQE it names, as libmlx5 does.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/shim.h"
#include "rocemu/clock.h"
#include "tests/unit/lib/daemon_rings.h"

#define QPN 0x0000c3
#define SQ_BBS 8
#define RQ_WQES 8
#define RQ_SHIFT 6		/* 4 data segments per receive WQE */
#define MAX_SGE 4
#define MAX_INLINE 64
#define RQ_OFFSET (SQ_BBS * ROCEMU_WQE_BB)
#define DBREC_OFFSET (RQ_OFFSET + (RQ_WQES << RQ_SHIFT))
#define BF_OFFSET (DBREC_OFFSET + ROCEMU_WQE_BB)
#define BF_SIZE (2 * ROCEMU_WQE_BB)
#define QP_MAP_SIZE (BF_OFFSET + BF_SIZE)

#define NCQE 8
#define CQ_MAX_CQE_SIZE 128
#define CQ_DBREC_OFFSET (NCQE * CQ_MAX_CQE_SIZE)

#define LKEY 0x1111
#define RKEY 0x2222
#define RADDR 0x7f0000001000ull
#define PEER_QPN 0x0000d4

static struct rocemu_context rctx;
static struct rocemu_qp qp;
static struct rocemu_cq cq;
static struct ibv_cq_ex *const cqx = &cq.ibcq;
static _Alignas(ROCEMU_WQE_BB) char qp_map[QP_MAP_SIZE];
static _Alignas(ROCEMU_WQE_BB) char cq_map[CQ_DBREC_OFFSET + ROCEMU_WQE_BB];
static __be32 *const cq_dbrec = (__be32 *)(cq_map + CQ_DBREC_OFFSET);
static struct daemon_cq *dcq;
static struct daemon_qp *dqp;
static char local[256];

/* The daemon connection's doorbells: nothing listens here, the test plays the daemon. */
void rocemu_ctx_doorbell(struct rocemu_context *ctx)
{
	ck_assert_ptr_eq(ctx, &rctx);
}

void rocemu_ctx_recv_doorbell(struct rocemu_context *ctx)
{
	ck_assert_ptr_eq(ctx, &rctx);
}

/* Not reached: the daemon connection is never looked at (no poller goes idle long enough). */
void rocemu_conn_check(struct rocemu_conn *conn)
{
	(void)conn;
	abort();
}

/* Not reached: the test's QP has no SRQ. */
uint64_t rocemu_srq_complete(struct rocemu_srq *srq, uint16_t wqe_counter)
{
	(void)srq;
	(void)wqe_counter;
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

/* An RC QP in RTS and a CQ of NCQE CQEs of cqe_size bytes, both sides of each ring set up. */
static void rings_open(uint32_t cqe_size)
{
	memset(&rctx, 0, sizeof(rctx));
	memset(&qp, 0, sizeof(qp));
	memset(&cq, 0, sizeof(cq));
	memset(qp_map, 0, sizeof(qp_map));
	memset(cq_map, 0, sizeof(cq_map));
	memset(local, 0, sizeof(local));
	qp.qpx.qp_base.context = &rctx.vctx.context;
	qp.qpx.qp_base.qp_type = IBV_QPT_RC;
	qp.qpx.qp_base.send_cq = ibv_cq_ex_to_cq(cqx);
	qp.qpx.qp_base.recv_cq = ibv_cq_ex_to_cq(cqx);
	qp.type = IBV_QPT_RC;
	qp.qpn = QPN;
	qp.cap = (struct ibv_qp_cap){ .max_send_sge = MAX_SGE, .max_recv_sge = MAX_SGE,
				      .max_inline_data = MAX_INLINE };
	qp.layout = (struct rocemu_qp_layout){
		.qpn = QPN, .sq_wqe_cnt = SQ_BBS, .rq_wqe_cnt = RQ_WQES, .rq_wqe_shift = RQ_SHIFT,
		.size = QP_MAP_SIZE, .sq_offset = 0, .rq_offset = RQ_OFFSET,
		.dbrec_offset = DBREC_OFFSET, .bf_offset = BF_OFFSET, .bf_size = BF_SIZE,
	};
	qp.map = qp_map;
	ck_assert_int_eq(rocemu_qp_queues_init(&qp), 0);
	rocemu_qp_queues_state(&qp, IBV_QPS_INIT);
	rocemu_qp_queues_state(&qp, IBV_QPS_RTS);
	ck_assert_int_eq(rocemu_qp_table_insert(&rctx, &qp), 0);
	dqp = daemon_qp_new(qp_map, &qp.layout, IBV_QPT_RC);

	cq.ibcq.context = &rctx.vctx.context;
	cq.ncqe = NCQE;
	cq.buf = cq_map;
	cq.cqe_size = cqe_size;
	cq.dbrec = cq_dbrec;
	cq.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	pthread_spin_init(&cq.lock, PTHREAD_PROCESS_PRIVATE);
	rocemu_cq_ex_set_poll_ops(cqx);
	dcq = daemon_cq_new(cq_map, cq_dbrec, cqe_size, NCQE);
}

static void rings_open_64(void)
{
	rings_open(sizeof(struct mlx5_cqe64));
}

static void rings_open_128(void)
{
	rings_open(2 * sizeof(struct mlx5_cqe64));
}

static void rings_close(void)
{
	daemon_cq_free(dcq);
	daemon_qp_free(dqp);
	pthread_spin_destroy(&cq.lock);
	rocemu_qp_table_remove(&rctx, &qp);
	rocemu_qp_table_free(&rctx);
	rocemu_qp_queues_free(&qp);
}

/* Post one send WR through ibv_post_send's path; the BB counter it starts at. */
static uint32_t post_send(struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;
	uint32_t bb = qp.sq.cur_post;

	ck_assert_int_eq(rocemu_post_send_op(&qp.qpx.qp_base, wr, &bad), 0);
	return bb;
}

static void post_recv(uint64_t wr_id, struct ibv_sge *sges, int n)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sges, .num_sge = n }, *bad = NULL;

	ck_assert_int_eq(rocemu_post_recv_op(&qp.qpx.qp_base, &wr, &bad), 0);
}

/* The daemon completes the send WQE at bb as its engines do: with what it parsed there. */
static void daemon_send_done(uint32_t bb, uint32_t byte_cnt, const void *scatter,
			     uint32_t scatter_len)
{
	struct daemon_send_wqe w;
	struct daemon_cqe c;

	ck_assert_int_eq(daemon_parse_send(dqp, bb, (uint32_t)daemon_sq_posted(dqp, bb), &w), 0);
	c = (struct daemon_cqe){
		.kind = DAEMON_CQE_SEND_DONE, .wqe_opcode = w.opcode, .qpn = QPN,
		.wqe_counter = w.wqe_counter, .byte_cnt = byte_cnt,
		.scatter = scatter, .scatter_len = scatter_len,
	};
	ck_assert(daemon_cqe_write(dcq, &c));
}

static void daemon_send_err(uint32_t bb, enum ibv_wc_status status)
{
	struct daemon_send_wqe w;
	struct daemon_cqe c;

	ck_assert_int_eq(daemon_parse_send(dqp, bb, (uint32_t)daemon_sq_posted(dqp, bb), &w), 0);
	c = (struct daemon_cqe){ .kind = DAEMON_CQE_SEND_ERR, .status = status,
				 .wqe_opcode = w.opcode, .qpn = QPN, .wqe_counter = w.wqe_counter };
	ck_assert(daemon_cqe_write(dcq, &c));
}

static uint32_t cq_ci(void)
{
	return be32toh(cq_dbrec[ROCEMU_CQ_DBR_SET_CI]);
}

/* The CQ lock is free: start_poll's ENOENT and end_poll let go of it. */
static void assert_cq_unlocked(void)
{
	ck_assert_int_eq(pthread_spin_trylock(&cq.lock), 0);
	pthread_spin_unlock(&cq.lock);
}

static struct ibv_poll_cq_attr poll_attr;

/* Nothing in the ring: ENOENT, the lock released (no end_poll), no index written. */
START_TEST(test_empty_start_poll)
{
	ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), ENOENT);
	assert_cq_unlocked();
	ck_assert_uint_eq(cq_ci(), 0);
}
END_TEST

/* A comp_mask the provider does not know is EINVAL, the CQE left for the next poll. */
START_TEST(test_start_poll_comp_mask_refused)
{
	struct ibv_poll_cq_attr attr = { .comp_mask = 1 };
	struct ibv_sge sge = { (uintptr_t)local, 8, LKEY };
	struct ibv_send_wr wr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };

	daemon_send_done(post_send(&wr), 0, NULL, 0);
	ck_assert_int_eq(ibv_start_poll(cqx, &attr), EINVAL);
	assert_cq_unlocked();
	ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), 0);
	ck_assert_uint_eq(cqx->wr_id, 5);
	ibv_end_poll(cqx);
}
END_TEST

/* Requester CQEs, one per getter walk: wr_id and status in the ibv_cq_ex, opcode and QP by read_*(). */
START_TEST(test_requester_completions)
{
	struct ibv_sge sge = { (uintptr_t)local, 16, LKEY };
	struct ibv_send_wr write = { .wr_id = 11, .sg_list = &sge, .num_sge = 1,
				     .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				     .wr.rdma = { RADDR, RKEY } };
	struct ibv_send_wr read = write, fadd = write;

	read.wr_id = 12;
	read.opcode = IBV_WR_RDMA_READ;
	fadd.wr_id = 13;
	fadd.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	sge.length = 8;
	fadd.wr.atomic = (__typeof__(fadd.wr.atomic)){ .remote_addr = RADDR, .compare_add = 1,
						       .rkey = RKEY };
	daemon_send_done(post_send(&write), 0, NULL, 0);
	daemon_send_done(post_send(&read), 16, NULL, 0);
	daemon_send_done(post_send(&fadd), 8, NULL, 0);

	ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), 0);
	ck_assert_uint_eq(cqx->wr_id, 11);
	ck_assert_int_eq(cqx->status, IBV_WC_SUCCESS);
	ck_assert_int_eq(ibv_wc_read_opcode(cqx), IBV_WC_RDMA_WRITE);
	ck_assert_uint_eq(ibv_wc_read_qp_num(cqx), QPN);
	ck_assert_uint_eq(ibv_wc_read_wc_flags(cqx), 0);
	ck_assert_uint_eq(ibv_wc_read_byte_len(cqx), 0);
	ck_assert_uint_eq(ibv_wc_read_vendor_err(cqx), 0);
	ck_assert_int_eq(ibv_next_poll(cqx), 0);
	ck_assert_uint_eq(cqx->wr_id, 12);
	ck_assert_int_eq(ibv_wc_read_opcode(cqx), IBV_WC_RDMA_READ);
	ck_assert_uint_eq(ibv_wc_read_byte_len(cqx), 16);	/* a READ's length is the CQE's */
	ck_assert_int_eq(ibv_next_poll(cqx), 0);
	ck_assert_uint_eq(cqx->wr_id, 13);
	ck_assert_int_eq(ibv_wc_read_opcode(cqx), IBV_WC_FETCH_ADD);
	ck_assert_uint_eq(ibv_wc_read_byte_len(cqx), 8);	/* an atomic's is 8, as mlx5 says */
	ck_assert_int_eq(ibv_next_poll(cqx), ENOENT);
	/* The index reaches the daemon at end_poll only, once for the three. */
	ck_assert_uint_eq(cq_ci(), 0);
	ibv_end_poll(cqx);
	ck_assert_uint_eq(cq_ci(), 3);
	assert_cq_unlocked();
	ck_assert_uint_eq(qp.sq.tail, qp.sq.cur_post);	/* the send queue is free again */
}
END_TEST

/* Responder CQEs: byte_len, immediate (as on the wire), src_qp, GRH and SL as the daemon writes them. */
START_TEST(test_responder_getters)
{
	struct ibv_sge sge = { (uintptr_t)local, sizeof(local), LKEY };
	const struct daemon_cqe send_imm = {
		.kind = DAEMON_CQE_RECV_SEND_IMM, .qpn = QPN, .byte_cnt = 100,
		.imm = htobe32(0x12345678), .src_qp = PEER_QPN, .grh_ipv4 = true,
	};
	const struct daemon_cqe write_imm = {
		.kind = DAEMON_CQE_RECV_WRITE_IMM, .qpn = QPN, .wqe_counter = 1, .byte_cnt = 4096,
		.imm = htobe32(0xcafe), .src_qp = PEER_QPN,
	};

	post_recv(21, &sge, 1);
	post_recv(22, &sge, 1);
	ck_assert(daemon_cqe_write(dcq, &send_imm));
	ck_assert(daemon_cqe_write(dcq, &write_imm));

	ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), 0);
	ck_assert_uint_eq(cqx->wr_id, 21);
	ck_assert_int_eq(cqx->status, IBV_WC_SUCCESS);
	ck_assert_int_eq(ibv_wc_read_opcode(cqx), IBV_WC_RECV);
	ck_assert_uint_eq(ibv_wc_read_byte_len(cqx), 100);
	ck_assert_uint_eq(ibv_wc_read_imm_data(cqx), htobe32(0x12345678));
	ck_assert_uint_eq(ibv_wc_read_wc_flags(cqx), IBV_WC_WITH_IMM | IBV_WC_GRH);
	ck_assert_uint_eq(ibv_wc_read_src_qp(cqx), PEER_QPN);
	ck_assert_uint_eq(ibv_wc_read_qp_num(cqx), QPN);
	/* A ConnectX's SL of a RoCE v2 receive is its packet type: UDP, IPv4 header (PRM). */
	ck_assert_uint_eq(ibv_wc_read_sl(cqx), 0x8 | MLX5_CQE_L3_HDR_TYPE_IPV4);
	ck_assert_uint_eq(ibv_wc_read_slid(cqx), 0);
	ck_assert_uint_eq(ibv_wc_read_dlid_path_bits(cqx), 0);
	ck_assert_int_eq(ibv_next_poll(cqx), 0);
	ck_assert_uint_eq(cqx->wr_id, 22);
	ck_assert_int_eq(ibv_wc_read_opcode(cqx), IBV_WC_RECV_RDMA_WITH_IMM);
	ck_assert_uint_eq(ibv_wc_read_byte_len(cqx), 4096);
	ck_assert_uint_eq(ibv_wc_read_imm_data(cqx), htobe32(0xcafe));
	ck_assert_uint_eq(ibv_wc_read_wc_flags(cqx), IBV_WC_WITH_IMM);
	ck_assert_uint_eq(ibv_wc_read_sl(cqx), 0);
	ibv_end_poll(cqx);
	ck_assert_uint_eq(qp.rq.tail, 2);
}
END_TEST

/* SEND with invalidate: the rkey in host order, as ibv_wc_read_invalidated_rkey reads it. */
START_TEST(test_invalidated_rkey_host_order)
{
	struct ibv_sge sge = { (uintptr_t)local, sizeof(local), LKEY };
	const struct daemon_cqe send_inv = {
		.kind = DAEMON_CQE_RECV_SEND_INV, .qpn = QPN, .byte_cnt = 10,
		.imm = htobe32(0x00abcd01), .src_qp = PEER_QPN,
	};

	post_recv(31, &sge, 1);
	ck_assert(daemon_cqe_write(dcq, &send_inv));
	ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), 0);
	ck_assert_int_eq(ibv_wc_read_opcode(cqx), IBV_WC_RECV);
	ck_assert_uint_eq(ibv_wc_read_wc_flags(cqx), IBV_WC_WITH_INV);
	ck_assert_uint_eq(ibv_wc_read_invalidated_rkey(cqx), 0x00abcd01);
	ibv_end_poll(cqx);
}
END_TEST

/* Error CQEs: the status of the syndrome, the WQE's opcode (send) or RECV, the WR completed. */
START_TEST(test_error_completions)
{
	struct ibv_sge sge = { (uintptr_t)local, 8, LKEY };
	struct ibv_send_wr send = { .wr_id = 41, .sg_list = &sge, .num_sge = 1,
				    .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				    .wr.rdma = { RADDR, RKEY } };
	const struct daemon_cqe recv_flush = {
		.kind = DAEMON_CQE_RECV_ERR, .status = IBV_WC_WR_FLUSH_ERR, .qpn = QPN,
	};

	post_recv(42, &sge, 1);
	daemon_send_err(post_send(&send), IBV_WC_REM_ACCESS_ERR);
	ck_assert(daemon_cqe_write(dcq, &recv_flush));

	ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), 0);
	ck_assert_uint_eq(cqx->wr_id, 41);
	ck_assert_int_eq(cqx->status, IBV_WC_REM_ACCESS_ERR);
	ck_assert_int_eq(ibv_wc_read_opcode(cqx), IBV_WC_RDMA_WRITE);
	ck_assert_uint_eq(ibv_wc_read_qp_num(cqx), QPN);
	ck_assert_uint_eq(ibv_wc_read_vendor_err(cqx), 0);	/* the daemon writes no vendor syndrome */
	ck_assert_int_eq(ibv_next_poll(cqx), 0);
	ck_assert_uint_eq(cqx->wr_id, 42);
	ck_assert_int_eq(cqx->status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(ibv_wc_read_opcode(cqx), IBV_WC_RECV);
	ibv_end_poll(cqx);
	ck_assert_uint_eq(qp.sq.tail, qp.sq.cur_post);
	ck_assert_uint_eq(qp.rq.tail, 1);
}
END_TEST

/* A success's timestamp is its CQE's, taken when the daemon wrote it; wall-clock ns follow it. */
START_TEST(test_completion_timestamps)
{
	struct ibv_sge sge = { (uintptr_t)local, 8, LKEY };
	struct ibv_send_wr wr = { .wr_id = 51, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct timespec real_before, real_after;
	uint64_t before, after, ts, ns;
	uint32_t bb = post_send(&wr);

	clock_gettime(CLOCK_REALTIME, &real_before);
	before = rocemu_clock_now();
	daemon_send_done(bb, 0, NULL, 0);
	after = rocemu_clock_now();
	clock_gettime(CLOCK_REALTIME, &real_after);

	ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), 0);
	ts = ibv_wc_read_completion_ts(cqx);
	ck_assert_uint_ge(ts, before);
	ck_assert_uint_le(ts, after);
	ns = ibv_wc_read_completion_wallclock_ns(cqx);
	/* One cycle is 6.4 ns; the clock info's offset is read between two monotonic reads. */
	ck_assert_uint_ge(ns + 1000, rocemu_timespec_ns(&real_before));
	ck_assert_uint_le(ns, rocemu_timespec_ns(&real_after) + 1000);
	ibv_end_poll(cqx);
}
END_TEST

/* An error CQE has no timestamp (its syndrome sits there): the clock at the poll stands for it. */
START_TEST(test_error_timestamp_is_the_poll_time)
{
	struct ibv_sge sge = { (uintptr_t)local, 8, LKEY };
	struct ibv_send_wr wr = { .wr_id = 61, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	uint64_t before, after, ts;

	daemon_send_err(post_send(&wr), IBV_WC_RETRY_EXC_ERR);
	before = rocemu_clock_now();
	ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), 0);
	after = rocemu_clock_now();
	ck_assert_int_eq(cqx->status, IBV_WC_RETRY_EXC_ERR);
	ts = ibv_wc_read_completion_ts(cqx);
	ck_assert_uint_ge(ts, before);
	ck_assert_uint_le(ts, after);
	ibv_end_poll(cqx);
}
END_TEST

/* Three passes over the ring, the owner bit flipping each: every CQE polled once, in order. */
START_TEST(test_passes_over_the_ring)
{
	struct ibv_sge sge = { (uintptr_t)local, 8, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	uint64_t next = 0;

	for (unsigned int round = 0; round < 3 * NCQE / 4; round++) {
		for (unsigned int i = 0; i < 4; i++) {
			wr.wr_id = 100 + round * 4 + i;
			daemon_send_done(post_send(&wr), 0, NULL, 0);
		}
		ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), 0);
		for (unsigned int i = 0; i < 4; i++) {
			ck_assert_uint_eq(cqx->wr_id, 100 + next++);
			ck_assert_int_eq(ibv_next_poll(cqx), i < 3 ? 0 : ENOENT);
		}
		ibv_end_poll(cqx);
		ck_assert_uint_eq(cq_ci(), (round + 1) * 4);
		ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), ENOENT);
	}
}
END_TEST

/* CQEs of a QP destroyed since (gone from the table) are dropped; the index still reaches the daemon. */
START_TEST(test_cqe_of_a_destroyed_qp_dropped)
{
	struct ibv_sge sge = { (uintptr_t)local, 8, LKEY };
	struct ibv_send_wr wr = { .wr_id = 65, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };

	daemon_send_done(post_send(&wr), 0, NULL, 0);
	daemon_send_done(post_send(&wr), 0, NULL, 0);
	rocemu_qp_table_remove(&rctx, &qp);
	ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), ENOENT);
	assert_cq_unlocked();
	ck_assert_uint_eq(cq_ci(), 2);
}
END_TEST

/* A received SEND carried in the CQE lands in the receive WQE's buffers, split over its SGEs. */
START_TEST(test_scatter_to_receive_buffers)
{
	uint32_t len = cq.cqe_size / 2;	/* 32 bytes in a 64-byte CQE, 64 in a 128-byte one */
	struct ibv_sge sges[2] = { { (uintptr_t)local, 20, LKEY },
				   { (uintptr_t)local + 128, 100, LKEY } };
	struct daemon_cqe recv = { .kind = DAEMON_CQE_RECV_SEND, .qpn = QPN, .byte_cnt = len,
				   .src_qp = PEER_QPN, .scatter_len = len };
	uint8_t data[64];

	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(0xa0 + i);
	recv.scatter = data;
	post_recv(71, sges, 2);
	ck_assert(daemon_cqe_write(dcq, &recv));
	ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), 0);
	ck_assert_int_eq(cqx->status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(cqx->wr_id, 71);
	ck_assert_uint_eq(ibv_wc_read_byte_len(cqx), len);
	ibv_end_poll(cqx);
	ck_assert_mem_eq(local, data, 20);
	ck_assert_mem_eq(local + 128, data + 20, len - 20);
	ck_assert_uint_eq((uint8_t)local[128 + len - 20], 0);	/* not a byte more */
}
END_TEST

/* Buffers shorter than the data the CQE carries: IBV_WC_LOC_LEN_ERR, as mlx5's copy_to_scat. */
START_TEST(test_scatter_to_short_receive_buffers)
{
	uint32_t len = cq.cqe_size / 2;
	struct ibv_sge sge = { (uintptr_t)local, 16, LKEY };
	uint8_t data[64] = { 1, 2, 3 };
	struct daemon_cqe recv = { .kind = DAEMON_CQE_RECV_SEND, .qpn = QPN, .byte_cnt = len,
				   .scatter = data, .scatter_len = len };

	post_recv(72, &sge, 1);
	ck_assert(daemon_cqe_write(dcq, &recv));
	ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), 0);
	ck_assert_uint_eq(cqx->wr_id, 72);
	ck_assert_int_eq(cqx->status, IBV_WC_LOC_LEN_ERR);
	ibv_end_poll(cqx);
	ck_assert_mem_eq(local, data, 16);
}
END_TEST

/* A READ reply in the CQE goes to the READ's SGEs, also where the WQE wrapped past the ring's end. */
START_TEST(test_scatter_read_reply_to_wrapped_wqe)
{
	uint32_t len = cq.cqe_size / 2;
	struct ibv_sge one = { (uintptr_t)local, 8, LKEY };
	struct ibv_send_wr filler = { .sg_list = &one, .num_sge = 1, .opcode = IBV_WR_SEND,
				      .send_flags = IBV_SEND_SIGNALED };
	struct ibv_sge sges[3] = { { (uintptr_t)local + 16, 10, LKEY },
				   { (uintptr_t)local + 64, 10, LKEY },
				   { (uintptr_t)local + 128, 64, LKEY } };
	struct ibv_send_wr read = { .wr_id = 81, .sg_list = sges, .num_sge = 3,
				    .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
				    .wr.rdma = { RADDR, RKEY } };
	uint8_t data[64];
	uint32_t bb;

	/* Seven one-BB SENDs completed: the READ (ctrl, raddr, 3 data: 2 BBs) starts at the last BB. */
	for (unsigned int i = 0; i < SQ_BBS - 1; i++) {
		filler.wr_id = i;
		daemon_send_done(post_send(&filler), 0, NULL, 0);
	}
	ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), 0);
	while (ibv_next_poll(cqx) == 0)
		;
	ibv_end_poll(cqx);
	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(0x40 + i);
	bb = post_send(&read);
	ck_assert_uint_eq(bb % SQ_BBS, SQ_BBS - 1);
	ck_assert_uint_eq(qp.sq.cur_post - bb, 2);
	daemon_send_done(bb, len, data, len);
	ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), 0);
	ck_assert_uint_eq(cqx->wr_id, 81);
	ck_assert_int_eq(cqx->status, IBV_WC_SUCCESS);
	ck_assert_int_eq(ibv_wc_read_opcode(cqx), IBV_WC_RDMA_READ);
	ibv_end_poll(cqx);
	ck_assert_mem_eq(local + 16, data, 10);
	ck_assert_mem_eq(local + 64, data + 10, 10);
	ck_assert_mem_eq(local + 128, data + 20, len - 20);
}
END_TEST

/* Data in the CQE of a WQE that reads nothing back: IBV_WC_REM_INV_REQ_ERR, as mlx5. */
START_TEST(test_scatter_to_a_send_refused)
{
	struct ibv_sge sge = { (uintptr_t)local, 32, LKEY };
	struct ibv_send_wr send = { .wr_id = 91, .sg_list = &sge, .num_sge = 1,
				    .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	uint8_t data[32] = { 9 };

	daemon_send_done(post_send(&send), 32, data, sizeof(data));
	ck_assert_int_eq(ibv_start_poll(cqx, &poll_attr), 0);
	ck_assert_uint_eq(cqx->wr_id, 91);
	ck_assert_int_eq(cqx->status, IBV_WC_REM_INV_REQ_ERR);
	ibv_end_poll(cqx);
	ck_assert_uint_eq((uint8_t)local[0], 0);
}
END_TEST

/* The same tests over CQEs of 64 and of 128 bytes. */
static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_empty_start_poll);
	tcase_add_test(tc, test_start_poll_comp_mask_refused);
	tcase_add_test(tc, test_requester_completions);
	tcase_add_test(tc, test_responder_getters);
	tcase_add_test(tc, test_invalidated_rkey_host_order);
	tcase_add_test(tc, test_error_completions);
	tcase_add_test(tc, test_completion_timestamps);
	tcase_add_test(tc, test_error_timestamp_is_the_poll_time);
	tcase_add_test(tc, test_passes_over_the_ring);
	tcase_add_test(tc, test_cqe_of_a_destroyed_qp_dropped);
	tcase_add_test(tc, test_scatter_to_receive_buffers);
	tcase_add_test(tc, test_scatter_to_short_receive_buffers);
	tcase_add_test(tc, test_scatter_read_reply_to_wrapped_wqe);
	tcase_add_test(tc, test_scatter_to_a_send_refused);
}

int main(void)
{
	Suite *s = suite_create("cq_ex");
	TCase *cqe64 = tcase_create("64-byte CQEs");
	TCase *cqe128 = tcase_create("128-byte CQEs");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(cqe64, rings_open_64, rings_close);
	add_tests(cqe64);
	suite_add_tcase(s, cqe64);
	tcase_add_checked_fixture(cqe128, rings_open_128, rings_close);
	add_tests(cqe128);
	suite_add_tcase(s, cqe128);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
