/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RC driven as a ConnectX is driven by direct-verbs programs (UCX's
 * rc_mlx5, DPDK-style code): the QPs and CQs are made and connected with
 * verbs, then used only through mlx5dv_init_obj and the formats of
 * <infiniband/mlx5dv.h>. The program writes SEND, inline SEND, WRITE and
 * READ WQEs and receive WQEs itself, in the RQ and in an SRQ (its free
 * list of mlx5_wqe_srq_next_seg), updates the doorbell records, writes
 * the BlueFlame register, parses CQEs itself (owner bit, opcode, byte
 * count, wqe_counter, QPN, the syndrome of an error CQE, data a CQE
 * carries for a small SEND or READ, scatter to CQE), arms a CQ itself
 * (arm word and CQ doorbell, sequence numbers from 0 as mlx5 counts them)
 * and checks data and completion events.
 * It also measures the daemon's CPU while idle, before and after the QPs
 * are handed out (none at all where this process can have a userfaultfd
 * write-protect shared memory: the idle daemon protects the doorbell
 * pages instead of polling them), and the latency of a doorbell rung at
 * an idle daemon.
 *
 *   mlx5dv_rc DEVICE_A DEVICE_B DAEMON_PID [cqe128]
 *
 * With cqe128 the QPs come from mlx5dv_create_qp with
 * ALLOW_SCATTER_TO_CQE and their CQs from mlx5dv_create_cq with 128-byte
 * CQEs: SENDs and signaled READs of up to 64 bytes come in the CQE. Without,
 * the QPs are verbs ones (scatter to CQE on, as mlx5 makes every QP) on
 * 64-byte CQEs: received SENDs of up to 32 bytes come in the CQE, READ
 * replies never (not every WQE signaled, nor allowed).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <infiniband/mlx5dv.h>

#include "tests/e2e/harness/verbs_pair.h"

#define MSG_LEN 8192
#define INLINE_LEN 32
#define SMALL_READ_LEN 48		/* in a 128-byte CQE, not in a 64-byte one */
#define SRQ_WR 16
#define SRQ_ROUNDS 40			/* SENDs through the SRQ: its free list goes round */
#define ROUNDS 200			/* send/receive round trips: both rings wrap */
#define IDLE_SAMPLE_MS 1000
#define IDLE_SETTLE_MS 100		/* the daemon protects the pages 2 ms after its last work */
#define IDLE_SLEEPS_MAX 20		/* polling, it would wake at least every millisecond */
#define IDLE_DOORBELL_WAIT_MS 100	/* long enough for the daemon to protect the pages or back off */

struct dv_qp {
	struct ibv_qp *ibqp;
	struct mlx5dv_qp dv;
	uint32_t sq_pi;			/* BBs posted */
	uint32_t rq_head;		/* receive WQEs posted */
	uint32_t bf_offset;		/* BlueFlame half to write next */
};

struct dv_cq {
	struct mlx5dv_cq dv;
	uint32_t ci;
};

struct dv_side {
	struct dv_qp qp;
	struct dv_cq scq, rcq;
};

static struct pair pair;
static struct dv_side sa, sb;
static uint32_t cqe_size = 64;		/* of the CQs mlx5dv_create_cq makes */
static struct ibv_comp_channel *channel;	/* of the requester's send CQ */
/* The data the last CQE polled carried (scatter to CQE), copied before its slot went back. */
static uint8_t cqe_data[64];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* side_open through mlx5dv_create_cq (cqe_size) and mlx5dv_create_qp. */
static bool dv_side_open(struct side *s, struct dev *d)
{
	struct mlx5dv_cq_init_attr cq_dv = { .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE,
					     .cqe_size = cqe_size };
	struct ibv_cq_init_attr_ex cq_attr = { .cqe = CQ_DEPTH, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct mlx5dv_qp_init_attr qp_dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS,
					     .create_flags = MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE };
	struct ibv_qp_init_attr_ex qp_attr = { .qp_type = IBV_QPT_RC, .cap = side_default.cap,
					       .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = d->pd };
	struct ibv_cq_ex *scq, *rcq;

	if (d == &dev_a)
		cq_attr.channel = channel;
	scq = mlx5dv_create_cq(d->ctx, &cq_attr, &cq_dv);
	cq_attr.channel = NULL;
	rcq = mlx5dv_create_cq(d->ctx, &cq_attr, &cq_dv);

	memset(s, 0, sizeof(*s));
	s->dev = d;
	s->send_cq = scq ? ibv_cq_ex_to_cq(scq) : NULL;
	s->recv_cq = rcq ? ibv_cq_ex_to_cq(rcq) : NULL;
	if (s->send_cq && s->recv_cq) {
		qp_attr.send_cq = s->send_cq;
		qp_attr.recv_cq = s->recv_cq;
		s->qp = mlx5dv_create_qp(d->ctx, &qp_attr, &qp_dv);
	}
	check(s->qp != NULL, "%s: mlx5dv_create_cq (%u-byte CQEs) and mlx5dv_create_qp: %s",
	      d->name, cqe_size, strerror(errno));
	return s->qp != NULL;
}

static bool dv_pair_open(struct pair *p)
{
	struct side_spec spec_a = side_default;
	int ret;

	channel = ibv_create_comp_channel(dev_a.ctx);
	if (!channel) {
		check(false, "ibv_create_comp_channel: %s", strerror(errno));
		return false;
	}
	spec_a.send_channel = channel;
	if (cqe_size == 64)
		return pair_open(p, &spec_a, &side_default);
	memset(p, 0, sizeof(*p));
	if (!dv_side_open(&p->a, &dev_a) || !dv_side_open(&p->b, &dev_b))
		return false;
	ret = qp_connect(p->a.qp, p->b.qp->qp_num, &dev_b.gid, PSN_A, PSN_B, &side_default.knobs);
	if (!ret)
		ret = qp_connect(p->b.qp, p->a.qp->qp_num, &dev_a.gid, PSN_B, PSN_A,
				 &side_default.knobs);
	check(ret == 0, "connecting the QPs: %s", strerror(ret));
	return ret == 0;
}

static bool dv_side_init(struct dv_side *d, struct side *s)
{
	struct mlx5dv_obj obj = {
		.qp = { s->qp, &d->qp.dv },
		.cq = { s->send_cq, &d->scq.dv },
	};
	struct mlx5dv_obj robj = { .cq = { s->recv_cq, &d->rcq.dv } };
	int ret;

	memset(d, 0, sizeof(*d));
	d->qp.ibqp = s->qp;
	ret = mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ);
	if (!ret)
		ret = mlx5dv_init_obj(&robj, MLX5DV_OBJ_CQ);
	check(ret == 0 && d->scq.dv.cqe_size == cqe_size && d->rcq.dv.cqe_size == cqe_size,
	      "mlx5dv_init_obj of QP 0x%06x and its CQs of %u-byte CQEs: %s", s->qp->qp_num,
	      d->scq.dv.cqe_size, strerror(ret));
	return ret == 0;
}

/* The CQE at the consumer index once hardware handed it over (mlx5's sw-owned test), else NULL. */
static struct mlx5_cqe64 *cqe_next(struct dv_cq *c)
{
	uint8_t *entry = (uint8_t *)c->dv.buf + (size_t)(c->ci & (c->dv.cqe_cnt - 1)) * c->dv.cqe_size;
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)(entry + c->dv.cqe_size - sizeof(*cqe));
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

	if ((op_own >> 4) == MLX5_CQE_INVALID ||
	    (op_own & MLX5_CQE_OWNER_MASK) != !!(c->ci & c->dv.cqe_cnt))
		return NULL;
	return cqe;
}

/* Wait (bounded) for the next CQE, copy it out, give its slot back through the doorbell record. */
static bool cqe_poll(struct dv_cq *c, struct mlx5_cqe64 *out, const char *what)
{
	uint64_t deadline = now_ns() + (uint64_t)completion_wait_ms * 1000000u;
	struct mlx5_cqe64 *cqe;

	while (!(cqe = cqe_next(c))) {
		if (now_ns() > deadline) {
			check(false, "%s: no CQE in %u ms", what, completion_wait_ms);
			return false;
		}
		/* Leave the daemon a core on small machines, as the shim's poller does. */
		sched_yield();
	}
	*out = *cqe;
	/* Scatter to CQE: a 64-byte CQE's first 32 bytes, or the 64 bytes before a 128-byte one's. */
	if (cqe->op_own & MLX5_INLINE_SCATTER_32)
		memcpy(cqe_data, cqe, 32);
	else if (cqe->op_own & MLX5_INLINE_SCATTER_64)
		memcpy(cqe_data, cqe - 1, 64);
	c->ci++;
	/* Word 0 of the CQ doorbell record is the consumer index (mlx5 MLX5_CQ_SET_CI); release:
	 * the CQE was read before its slot is given back. */
	__atomic_store_n(&c->dv.dbrec[0], htobe32(c->ci & 0xffffff), __ATOMIC_RELEASE);
	return true;
}

static bool cq_empty(struct dv_cq *c)
{
	return cqe_next(c) == NULL;
}

/* Ring the send doorbell: doorbell record, then the first 64 bytes of the WQE to BlueFlame. */
static void sq_ring(struct dv_qp *q, const void *ctrl)
{
	/* Release: the WQE is in memory before the doorbell record says so. */
	__atomic_store_n(&q->dv.dbrec[MLX5_SND_DBR], htobe32(q->sq_pi & 0xffff), __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy((uint8_t *)q->dv.bf.reg + q->bf_offset, ctrl, 64);
	q->bf_offset ^= q->dv.bf.size;
}

/*
 * Post one signaled WQE of opcode: raddr/rkey when rkey is non-zero, then
 * one data segment (addr, len, lkey) or, with lkey 0, len inline bytes at
 * addr. Returns the WQE's index (its CQE's wqe_counter).
 */
static uint16_t post_wqe(struct dv_qp *q, uint8_t opcode, uint64_t raddr, uint32_t rkey,
			 uint64_t addr, uint32_t len, uint32_t lkey)
{
	uint16_t index = (uint16_t)q->sq_pi;
	uint8_t *wqe = (uint8_t *)q->dv.sq.buf +
		       (size_t)(q->sq_pi & (q->dv.sq.wqe_cnt - 1)) * q->dv.sq.stride;
	struct mlx5_wqe_ctrl_seg *ctrl = (void *)wqe;
	uint8_t *seg = wqe + sizeof(*ctrl);
	uint8_t ds = 1;

	memset(wqe, 0, 64);
	if (rkey) {
		struct mlx5_wqe_raddr_seg *r = (void *)seg;

		r->raddr = htobe64(raddr);
		r->rkey = htobe32(rkey);
		seg += sizeof(*r);
		ds++;
	}
	if (lkey) {
		mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)seg, len, lkey, addr);
		ds++;
	} else {
		struct mlx5_wqe_inl_data_seg *in = (void *)seg;

		in->byte_count = htobe32(len | MLX5_INLINE_SEG);
		memcpy(in + 1, (void *)(uintptr_t)addr, len);
		ds += (sizeof(*in) + len + 15) / 16;
	}
	mlx5dv_set_ctrl_seg(ctrl, index, opcode, 0, q->ibqp->qp_num, MLX5_WQE_CTRL_CQ_UPDATE, ds, 0,
			    0);
	q->sq_pi += (ds * 16u + 63) / 64;
	sq_ring(q, wqe);
	return index;
}

/* One receive WQE over (addr, len, lkey), terminated as mlx5 does when the stride has room. */
static uint16_t post_recv_wqe(struct dv_qp *q, uint64_t addr, uint32_t len, uint32_t lkey)
{
	uint16_t index = (uint16_t)q->rq_head;
	struct mlx5_wqe_data_seg *d = (void *)((uint8_t *)q->dv.rq.buf +
					       (size_t)(q->rq_head & (q->dv.rq.wqe_cnt - 1)) * q->dv.rq.stride);

	mlx5dv_set_data_seg(d, len, lkey, addr);
	if (q->dv.rq.stride > sizeof(*d))
		mlx5dv_set_data_seg(d + 1, 0, MLX5_INVALID_LKEY, 0);
	q->rq_head++;
	__atomic_store_n(&q->dv.dbrec[MLX5_RCV_DBR], htobe32(q->rq_head & 0xffff), __ATOMIC_RELEASE);
	return index;
}

static uint32_t cqe_qpn(const struct mlx5_cqe64 *cqe)
{
	return be32toh(cqe->sop_drop_qpn) & 0xffffff;
}

/* A requester CQE of q for the WQE at index. */
static void expect_req_cqe(struct mlx5_cqe64 *cqe, struct dv_qp *q, uint16_t index,
			   long byte_cnt, const char *what)
{
	check(mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_REQ && be16toh(cqe->wqe_counter) == index &&
		      cqe_qpn(cqe) == q->ibqp->qp_num &&
		      (byte_cnt < 0 || be32toh(cqe->byte_cnt) == (uint32_t)byte_cnt),
	      "%s: requester CQE opcode 0x%x wqe_counter %u (want %u) qpn 0x%06x byte_cnt %u", what,
	      mlx5dv_get_cqe_opcode(cqe), be16toh(cqe->wqe_counter), index, cqe_qpn(cqe),
	      be32toh(cqe->byte_cnt));
}

static void expect_recv_cqe(struct mlx5_cqe64 *cqe, struct dv_qp *q, uint16_t index,
			    uint32_t byte_cnt, const char *what)
{
	check(mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_RESP_SEND && be16toh(cqe->wqe_counter) == index &&
		      cqe_qpn(cqe) == q->ibqp->qp_num && be32toh(cqe->byte_cnt) == byte_cnt,
	      "%s: responder CQE opcode 0x%x wqe_counter %u (want %u) qpn 0x%06x byte_cnt %u", what,
	      mlx5dv_get_cqe_opcode(cqe), be16toh(cqe->wqe_counter), index, cqe_qpn(cqe),
	      be32toh(cqe->byte_cnt));
}

/* The op_own flag of a CQE carrying len bytes of data on these CQs, or 0 when they go to memory. */
static uint8_t scatter_flag(uint32_t len)
{
	if (len > cqe_size / 2)
		return 0;
	return cqe_size == 128 ? MLX5_INLINE_SCATTER_64 : MLX5_INLINE_SCATTER_32;
}

/*
 * The data of a CQE whose WQE named dst: in the CQE when small enough, and
 * then dst untouched until the program copies it there (as mlx5's poll
 * does); else in dst.
 */
static void cqe_data_check(const struct mlx5_cqe64 *cqe, uint8_t *dst, uint32_t len,
			   uint8_t want, const char *what)
{
	uint8_t got = cqe->op_own & (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64);

	check(got == want, "%s: %u bytes %s (op_own scatter bits 0x%x, want 0x%x)", what, len,
	      want ? "in the CQE" : "in memory", got, want);
	if (got && got == want) {
		check_untouched(dst, len, UNTOUCHED, what);
		memcpy(dst, cqe_data, len);
	}
}

static void send_recv(struct buf *src, struct buf *dst, uint32_t len, bool inl, unsigned int seed,
		      const char *what)
{
	struct mlx5_cqe64 cqe;
	uint16_t sidx, ridx;

	fill_pattern(src->p, len, seed, 0);
	memset(dst->p, UNTOUCHED, len);
	ridx = post_recv_wqe(&sb.qp, (uintptr_t)dst->p, len, dst->mr->lkey);
	sidx = post_wqe(&sa.qp, MLX5_OPCODE_SEND, 0, 0, (uintptr_t)src->p, len, inl ? 0 : src->mr->lkey);
	if (cqe_poll(&sa.scq, &cqe, what))
		expect_req_cqe(&cqe, &sa.qp, sidx, -1, what);
	if (cqe_poll(&sb.rcq, &cqe, what)) {
		expect_recv_cqe(&cqe, &sb.qp, ridx, len, what);
		cqe_data_check(&cqe, dst->p, len, scatter_flag(len), what);
	}
	check_pattern(dst->p, len, seed, 0, what);
}

/*
 * A signaled READ of len bytes into a_buf: in its CQE when small enough and
 * the QPs allow it (cqe128's ALLOW_SCATTER_TO_CQE; verbs QPs on 64-byte
 * CQEs neither signal every WQE nor allow it), else in memory.
 */
static void read_into(struct buf *a_buf, struct buf *b_buf, uint32_t len, unsigned int seed,
		      const char *what)
{
	struct mlx5_cqe64 cqe;
	uint16_t idx;

	fill_pattern(b_buf->p, len, seed, 0);
	memset(a_buf->p, UNTOUCHED, len);
	idx = post_wqe(&sa.qp, MLX5_OPCODE_RDMA_READ, raddr_of(b_buf, 0), b_buf->mr->rkey,
		       (uintptr_t)a_buf->p, len, a_buf->mr->lkey);
	if (cqe_poll(&sa.scq, &cqe, what)) {
		expect_req_cqe(&cqe, &sa.qp, idx, len, what);
		cqe_data_check(&cqe, a_buf->p, len, cqe_size == 128 ? scatter_flag(len) : 0, what);
	}
	check_pattern(a_buf->p, len, seed, 0, what);
}

static void write_read(struct buf *a_buf, struct buf *b_buf)
{
	struct mlx5_cqe64 cqe;
	uint16_t idx;

	fill_pattern(a_buf->p, MSG_LEN, 7, 0);
	memset(b_buf->p, UNTOUCHED, MSG_LEN);
	idx = post_wqe(&sa.qp, MLX5_OPCODE_RDMA_WRITE, raddr_of(b_buf, 0), b_buf->mr->rkey,
		       (uintptr_t)a_buf->p, MSG_LEN, a_buf->mr->lkey);
	if (cqe_poll(&sa.scq, &cqe, "WRITE"))
		expect_req_cqe(&cqe, &sa.qp, idx, -1, "WRITE");
	check_pattern(b_buf->p, MSG_LEN, 7, 0, "WRITE: data at the responder");
	check(cq_empty(&sb.rcq), "WRITE: no receive CQE at the responder");
	read_into(a_buf, b_buf, MSG_LEN, 9, "READ");
}

/* An SRQ driven through mlx5dv_srq: WQEs taken from the head of its free list, freed at its tail. */
struct dv_srq {
	struct mlx5dv_srq dv;
	uint32_t counter;		/* WQEs posted: the doorbell record's word */
};

static struct mlx5_wqe_srq_next_seg *srq_wqe(struct dv_srq *q, uint32_t index)
{
	return (void *)((uint8_t *)q->dv.buf + (size_t)index * q->dv.stride);
}

/* Post one receive (addr, len, lkey) at the head, as mlx5_post_srq_recv. Returns its index. */
static uint16_t srq_post(struct dv_srq *q, uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct mlx5_wqe_srq_next_seg *next = srq_wqe(q, q->dv.head);
	struct mlx5_wqe_data_seg *d = (void *)(next + 1);
	uint16_t index = (uint16_t)q->dv.head;

	mlx5dv_set_data_seg(d, len, lkey, addr);
	if (q->dv.stride >= sizeof(*next) + 2 * sizeof(*d))
		mlx5dv_set_data_seg(d + 1, 0, MLX5_INVALID_LKEY, 0);
	q->dv.head = be16toh(next->next_wqe_index);
	q->counter++;
	/* Release: the WQE is in memory before the doorbell record counts it. */
	__atomic_store_n(&q->dv.dbrec[0], htobe32(q->counter & 0xffff), __ATOMIC_RELEASE);
	return index;
}

/* The WQE a receive CQE named goes back to the free list after the tail (mlx5_free_srq_wqe). */
static void srq_free(struct dv_srq *q, uint16_t index)
{
	srq_wqe(q, q->dv.tail)->next_wqe_index = htobe16(index);
	q->dv.tail = index;
}

/*
 * Receives through an SRQ the program posts itself: a second RC pair whose
 * responder takes its WQEs from an SRQ, SENDs of small (in the CQE) and
 * larger sizes, each receive CQE's wqe_counter naming the SRQ WQE, whose
 * data segment says where a CQE's data goes.
 */
static void srq_sends(struct buf *a_buf, struct buf *b_buf)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = SRQ_WR, .max_sge = 1 } };
	struct ibv_qp_cap cap = side_default.cap;
	struct ibv_cq *scq = ibv_create_cq(dev_a.ctx, CQ_DEPTH, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(dev_b.ctx, CQ_DEPTH, NULL, NULL, 0);
	struct ibv_srq *srq = ibv_create_srq(dev_b.pd, &sattr);
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct dv_qp a = { 0 };
	struct dv_cq ac = { 0 }, bc = { 0 };
	struct dv_srq q = { 0 };
	struct mlx5_cqe64 cqe;
	unsigned int i, bad = 0, in_cqe = 0;
	int ret = -1;

	if (scq && rcq && srq) {
		struct ibv_qp_init_attr battr = { .send_cq = rcq, .recv_cq = rcq, .srq = srq,
						  .qp_type = IBV_QPT_RC, .cap = side_default.cap };

		qa = qp_create(&dev_a, scq, scq, false, &cap);
		qb = ibv_create_qp(dev_b.pd, &battr);
	}
	if (qa && qb) {
		ret = qp_connect(qa, qb->qp_num, &dev_b.gid, PSN_A, PSN_B, &side_default.knobs);
		if (!ret)
			ret = qp_connect(qb, qa->qp_num, &dev_a.gid, PSN_B, PSN_A, &side_default.knobs);
	}
	if (!ret) {
		struct mlx5dv_obj obj = { .qp = { qa, &a.dv }, .cq = { scq, &ac.dv } };
		struct mlx5dv_obj bobj = { .cq = { rcq, &bc.dv }, .srq = { srq, &q.dv } };

		q.dv.comp_mask = MLX5DV_SRQ_MASK_SRQN;
		a.ibqp = qa;
		ret = mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ);
		if (!ret)
			ret = mlx5dv_init_obj(&bobj, MLX5DV_OBJ_CQ | MLX5DV_OBJ_SRQ);
	}
	check(!ret && q.dv.buf && q.dv.stride >= 32,
	      "an RC pair over an SRQ, handed out: srqn 0x%x, stride %u, head %u, tail %u (%d)",
	      q.dv.srqn, q.dv.stride, q.dv.head, q.dv.tail, ret);
	for (i = 0; !ret && i < SRQ_ROUNDS && bad < 3; i++) {
		uint32_t len = i % 2 ? 16 : 1000, off = (i % 4) * 1024;
		uint8_t *dst = b_buf->p + off;
		uint16_t ridx, sidx;

		fill_pattern(a_buf->p, len, 100 + i, 0);
		memset(dst, UNTOUCHED, len);
		ridx = srq_post(&q, (uintptr_t)dst, len, b_buf->mr->lkey);
		sidx = post_wqe(&a, MLX5_OPCODE_SEND, 0, 0, (uintptr_t)a_buf->p, len, a_buf->mr->lkey);
		if (!cqe_poll(&ac, &cqe, "SEND to the SRQ") || be16toh(cqe.wqe_counter) != sidx ||
		    mlx5dv_get_cqe_opcode(&cqe) != MLX5_CQE_REQ) {
			bad++;
			continue;
		}
		if (!cqe_poll(&bc, &cqe, "receive from the SRQ") ||
		    mlx5dv_get_cqe_opcode(&cqe) != MLX5_CQE_RESP_SEND ||
		    be16toh(cqe.wqe_counter) != ridx || be32toh(cqe.byte_cnt) != len ||
		    (cqe.op_own & MLX5_INLINE_SCATTER_32) != (len <= 32 ? MLX5_INLINE_SCATTER_32 : 0)) {
			bad++;
			continue;
		}
		if (cqe.op_own & MLX5_INLINE_SCATTER_32) {
			/* Where the WQE the CQE names said, as mlx5_copy_to_recv_srq. */
			struct mlx5_wqe_data_seg *d = (void *)(srq_wqe(&q, ridx) + 1);

			in_cqe++;
			if (!all_bytes(dst, len, UNTOUCHED))
				bad++;
			memcpy((void *)(uintptr_t)be64toh(d->addr), cqe_data, len);
		}
		srq_free(&q, ridx);
		if (pattern_mismatch(dst, len, 100 + i, 0) != len)
			bad++;
	}
	check(!ret && !bad && in_cqe == SRQ_ROUNDS / 2,
	      "%u SENDs through an SRQ of %u WQEs posted by the program, %u of them in the CQE: "
	      "%u bad", i, SRQ_WR, in_cqe, bad);
	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
	if (srq)
		ibv_destroy_srq(srq);
	if (scq)
		ibv_destroy_cq(scq);
	if (rcq)
		ibv_destroy_cq(rcq);
}

/* Round trips through both rings several times over: owner bits flip, counters wrap. */
static void rounds(struct buf *src, struct buf *dst)
{
	struct mlx5_cqe64 cqe;
	uint64_t start = now_ns();
	unsigned int i, bad = 0;
	uint16_t sidx, ridx;

	for (i = 0; i < ROUNDS; i++) {
		ridx = post_recv_wqe(&sb.qp, (uintptr_t)dst->p, 64, dst->mr->lkey);
		sidx = post_wqe(&sa.qp, MLX5_OPCODE_SEND, 0, 0, (uintptr_t)src->p, 64, src->mr->lkey);
		if (!cqe_poll(&sa.scq, &cqe, "round") || be16toh(cqe.wqe_counter) != sidx ||
		    mlx5dv_get_cqe_opcode(&cqe) != MLX5_CQE_REQ)
			bad++;
		if (!cqe_poll(&sb.rcq, &cqe, "round") || be16toh(cqe.wqe_counter) != ridx ||
		    mlx5dv_get_cqe_opcode(&cqe) != MLX5_CQE_RESP_SEND)
			bad++;
	}
	check(!bad, "%u SEND round trips past the ends of the SQ (%u BBs), RQ (%u) and CQs (%u): "
	      "%u bad CQEs; %.1f us per round trip", ROUNDS, sa.qp.dv.sq.wqe_cnt,
	      sb.qp.dv.rq.wqe_cnt, sa.scq.dv.cqe_cnt, bad, (now_ns() - start) / 1000.0 / ROUNDS);
}

/* Arm c for any completion with sequence sn, as mlx5_arm_cq: arm word, then the CQ doorbell. */
static void cq_arm(struct dv_cq *c, uint32_t sn)
{
	uint32_t word = (sn & 3) << 28 | MLX5_CQ_DB_REQ_NOT | (c->ci & 0xffffff);
	__be32 doorbell[2] = { htobe32(word), htobe32(c->dv.cqn) };

	/* Word 1 of the CQ doorbell record is the arm word (mlx5 MLX5_CQ_ARM_DB). */
	__atomic_store_n(&c->dv.dbrec[1], htobe32(word), __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy((uint8_t *)c->dv.cq_uar + MLX5_CQ_DOORBELL, doorbell, sizeof(doorbell));
}

/* Whether the channel gives an event for the requester's send CQ within ms. */
static bool cq_event(unsigned int ms)
{
	struct pollfd pfd = { .fd = channel->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (poll(&pfd, 1, (int)ms) != 1 || ibv_get_cq_event(channel, &ev_cq, &ev_ctx))
		return false;
	ibv_ack_cq_events(ev_cq, 1);
	return ev_cq == pair.a.send_cq;
}

/* A WRITE on the requester, its CQE polled. */
static void write_polled(struct buf *a_buf, struct buf *b_buf, const char *what)
{
	struct mlx5_cqe64 cqe;
	uint16_t idx;

	idx = post_wqe(&sa.qp, MLX5_OPCODE_RDMA_WRITE, raddr_of(b_buf, 0), b_buf->mr->rkey,
		       (uintptr_t)a_buf->p, 64, a_buf->mr->lkey);
	if (cqe_poll(&sa.scq, &cqe, what))
		expect_req_cqe(&cqe, &sa.qp, idx, -1, what);
}

/* Completion events of a CQ armed by the program, sequence numbers as mlx5 counts them from 0. */
static void arm_events(struct buf *a_buf, struct buf *b_buf)
{
	check(!cq_event(0), "no completion event before the CQ is armed");
	cq_arm(&sa.scq, 0);
	write_polled(a_buf, b_buf, "WRITE after arming with sequence 0");
	check(cq_event(completion_wait_ms), "armed with sequence 0: one completion event");
	write_polled(a_buf, b_buf, "WRITE after the event, not armed again");
	check(!cq_event(200), "no event without a new arm");
	cq_arm(&sa.scq, 0);
	write_polled(a_buf, b_buf, "WRITE after arming with the sequence already fired");
	check(!cq_event(200), "an arm with the sequence already fired gives no event");
	cq_arm(&sa.scq, 1);
	write_polled(a_buf, b_buf, "WRITE after arming with sequence 1");
	check(cq_event(completion_wait_ms), "armed with sequence 1: one completion event");
}

/* A doorbell rung while the daemon sleeps: only its poll timer can see it. */
static void idle_doorbell(struct buf *a_buf, struct buf *b_buf)
{
	struct mlx5_cqe64 cqe;
	uint64_t start;
	uint16_t idx;

	usleep(IDLE_DOORBELL_WAIT_MS * 1000);
	start = now_ns();
	idx = post_wqe(&sa.qp, MLX5_OPCODE_RDMA_WRITE, raddr_of(b_buf, 0), b_buf->mr->rkey,
		       (uintptr_t)a_buf->p, 64, a_buf->mr->lkey);
	if (cqe_poll(&sa.scq, &cqe, "WRITE at an idle daemon"))
		expect_req_cqe(&cqe, &sa.qp, idx, -1, "WRITE at an idle daemon");
	printf("doorbell at a daemon idle %d ms: completion after %.1f us\n", IDLE_DOORBELL_WAIT_MS,
	       (now_ns() - start) / 1000.0);
}

static void bad_rkey(struct buf *a_buf, struct buf *b_buf)
{
	struct mlx5_cqe64 cqe;
	const struct mlx5_err_cqe *err = (const void *)&cqe;
	uint16_t idx;

	idx = post_wqe(&sa.qp, MLX5_OPCODE_RDMA_WRITE, raddr_of(b_buf, 0), b_buf->mr->rkey ^ 0x80,
		       (uintptr_t)a_buf->p, 64, a_buf->mr->lkey);
	if (!cqe_poll(&sa.scq, &cqe, "WRITE with a bad rkey"))
		return;
	check(mlx5dv_get_cqe_opcode(&cqe) == MLX5_CQE_REQ_ERR &&
		      err->syndrome == MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR &&
		      be16toh(err->wqe_counter) == idx && cqe_qpn(&cqe) == sa.qp.ibqp->qp_num,
	      "WRITE with a bad rkey: error CQE opcode 0x%x syndrome 0x%x (remote access 0x%x) "
	      "vendor 0x%x wqe_counter %u (want %u)", mlx5dv_get_cqe_opcode(&cqe), err->syndrome,
	      MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, err->vendor_err_synd, be16toh(err->wqe_counter),
	      idx);
	expect_state(sa.qp.ibqp, IBV_QPS_ERR, "requester after the error CQE");
}

/* The daemon's CPU time (clock ticks) over IDLE_SAMPLE_MS of nothing happening. */
static long daemon_ticks_idle(int pid)
{
	char path[64];
	long t0, t1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (int i = 0; i < 2; i++) {
		unsigned long ut, st;

		f = fopen(path, "r");
		if (!f || fscanf(f, "%*d %*s %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
				 &st) != 2) {
			if (f)
				fclose(f);
			return -1;
		}
		fclose(f);
		if (i == 0) {
			t0 = (long)(ut + st);
			usleep(IDLE_SAMPLE_MS * 1000);
		} else {
			t1 = (long)(ut + st);
		}
	}
	return t1 - t0;
}

/* Whether this process may have a userfaultfd write-protect a page of shared memory, as the shim asks. */
static bool uffd_wp_shmem(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_HUGETLBFS_SHMEM };
	long page = sysconf(_SC_PAGESIZE);
	int mfd = memfd_create("uffd-probe", MFD_CLOEXEC);
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	void *p = MAP_FAILED;
	bool ok = false;

	if (mfd >= 0 && fd >= 0 && !ftruncate(mfd, page))
		p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (p != MAP_FAILED) {
		struct uffdio_register reg = { .range = { (uintptr_t)p, (uint64_t)page },
					       .mode = UFFDIO_REGISTER_MODE_WP };

		ok = !ioctl(fd, UFFDIO_API, &api) && !ioctl(fd, UFFDIO_REGISTER, &reg);
		munmap(p, (size_t)page);
	}
	if (fd >= 0)
		close(fd);
	if (mfd >= 0)
		close(mfd);
	return ok;
}

/* The daemon's sleeps (voluntary context switches) over IDLE_SAMPLE_MS after IDLE_SETTLE_MS. */
static long daemon_sleeps_idle(int pid)
{
	char path[64], line[128];
	long n[2] = { -1, -1 };

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	usleep(IDLE_SETTLE_MS * 1000);
	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(path, "r");

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %ld", &n[i]) == 1)
				break;
		if (f)
			fclose(f);
		if (n[i] < 0)
			return -1;
		if (i == 0)
			usleep(IDLE_SAMPLE_MS * 1000);
	}
	return n[1] - n[0];
}

int main(int argc, char **argv)
{
	long hz = sysconf(_SC_CLK_TCK), before, after;
	struct buf *a_buf, *b_buf;
	int pid;

	if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "cqe128"))) {
		fprintf(stderr, "usage: %s DEVICE_A DEVICE_B DAEMON_PID [cqe128]\n", argv[0]);
		return 2;
	}
	pid = atoi(argv[3]);
	if (argc == 5)
		cqe_size = 128;
	if (!dev_open(&dev_a, argv[1]) || !dev_open(&dev_b, argv[2]) || !dv_pair_open(&pair))
		return checks_finish();
	a_buf = buf_new(&dev_a, MSG_LEN, MSG_LEN, IBV_ACCESS_LOCAL_WRITE, 0);
	b_buf = buf_new(&dev_b, MSG_LEN, MSG_LEN,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 0);
	before = daemon_ticks_idle(pid);
	check(before >= 0 && before <= 1, "daemon idle with verbs QPs only: %ld ticks of %ld in %d ms",
	      before, hz, IDLE_SAMPLE_MS);
	if (a_buf && b_buf && dv_side_init(&sa, &pair.a) && dv_side_init(&sb, &pair.b)) {
		if (uffd_wp_shmem()) {
			/* Its poll would wake it a thousand times a second; protected pages, never. */
			printf("userfaultfd: doorbell pages write-protected while the daemon is idle\n");
			after = daemon_sleeps_idle(pid);
			check(after >= 0 && after <= IDLE_SLEEPS_MAX,
			      "daemon idle with QPs handed out, not polling: woke %ld times in %d ms",
			      after, IDLE_SAMPLE_MS);
		} else {
			after = daemon_ticks_idle(pid);
			/* Its poll backs off to 1 ms: well under a tenth of a core. */
			check(after >= 0 && after * 10 < hz,
			      "daemon idle with QPs handed out, polling: %ld ticks of %ld in %d ms",
			      after, hz, IDLE_SAMPLE_MS);
		}
		send_recv(a_buf, b_buf, MSG_LEN, false, 3, "SEND");
		send_recv(a_buf, b_buf, INLINE_LEN, true, 5, "inline SEND");
		send_recv(a_buf, b_buf, 64, false, 13, "SEND of 64 bytes");
		write_read(a_buf, b_buf);
		read_into(a_buf, b_buf, SMALL_READ_LEN, 11, "small READ");
		srq_sends(a_buf, b_buf);
		rounds(a_buf, b_buf);
		arm_events(a_buf, b_buf);
		idle_doorbell(a_buf, b_buf);
		bad_rkey(a_buf, b_buf);
	}
	bufs_free();
	pair_close(&pair);
	if (channel)
		ibv_destroy_comp_channel(channel);
	dev_close(&dev_a);
	dev_close(&dev_b);
	return checks_finish();
}
