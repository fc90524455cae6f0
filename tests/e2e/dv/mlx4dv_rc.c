/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RC driven as a ConnectX-3 is driven by direct-verbs programs (DPDK's
 * mlx4 PMD style): QPs, CQs and an SRQ made and connected with verbs,
 * then used only through mlx4dv_init_obj and the formats of
 * <infiniband/mlx4dv.h>. The program writes SEND (gathered and inline),
 * RDMA WRITE, WRITE with immediate, RDMA READ and both atomics WQEs
 * itself (ctrl segment with the owner bit of the pass, raddr, atomic,
 * data and inline segments), rings the send doorbell with doorbell_qpn
 * (through sdb and through the UAR page it maps from cmd_fd at
 * uar_mmap_offset) or copies an inline WQE to the BlueFlame page,
 * posts receives in the RQ and in the SRQ (its free list of next
 * segments, the doorbell record's counter), and parses CQEs itself
 * (owner bit, opcode, is_send, byte_cnt, wqe_index, QPN, immediate, an
 * error CQE's syndrome). The SQ and the CQs wrap more than twice; every
 * byte moved is checked.
 *
 *   mlx4dv_rc DEVICE_A DEVICE_B	(both ConnectX-3 devices)
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <infiniband/mlx4dv.h>

#include "tests/e2e/harness/verbs_pair.h"

#define MSG_LEN 8192
#define INLINE_LEN 32
#define INL_RECV_WANT 100		/* granted as the next power of two */
#define SRQ_WR 16
#define SRQ_ROUNDS 40			/* SENDs through the SRQ: its free list goes round */
#define PASSES 3			/* times the SQ and the CQs go round */
#define IMM 0x12345678u
#define ATOMIC_INIT 0x0102030405060708ull
#define ATOMIC_SWAP 0x1111222233334444ull
#define ATOMIC_ADD 0x10ull
#define BF_HALF 256			/* libmlx4's bf_buf_size on a ConnectX-3: half the 512-byte register */
#define UAR_PROBE 0x100			/* a UAR word the device does not read */

struct dv_qp {
	struct ibv_qp *ibqp;
	struct mlx4dv_qp dv;
	uint32_t sq_pi;			/* WQEs posted */
	uint32_t rq_head;		/* receive WQEs posted */
	uint8_t *uar, *bf;		/* cmd_fd's UAR and BlueFlame pages of the QP */
	size_t page;
	uint32_t bf_offset;		/* the BlueFlame half the next copy goes to */
	unsigned int uar_rings, bf_rings;
};

struct dv_cq {
	struct mlx4dv_cq dv;
	uint32_t ci;
};

struct dv_side {
	struct dv_qp qp;
	struct dv_cq scq, rcq;
};

static struct pair pair;
static struct dv_side sa, sb;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- completions ---- */

/* The mlx4_cqe at the consumer index (a 64-byte entry's second half) once software's, else NULL. */
static struct mlx4_cqe *cqe_next(struct dv_cq *c)
{
	uint8_t *entry = (uint8_t *)c->dv.buf.buf +
			 (size_t)(c->ci & (c->dv.cqe_cnt - 1)) * (size_t)c->dv.cqe_size;
	struct mlx4_cqe *cqe = (void *)(entry + c->dv.cqe_size - sizeof(*cqe));
	uint8_t owner = __atomic_load_n(&cqe->owner_sr_opcode, __ATOMIC_ACQUIRE);

	return !(owner & MLX4_CQE_OWNER_MASK) == !(c->ci & c->dv.cqe_cnt) ? cqe : NULL;
}

/* Wait (bounded) for the next CQE, copy it out, give its slot back through set_ci_db. */
static bool cqe_poll(struct dv_cq *c, struct mlx4_cqe *out, const char *what)
{
	uint64_t deadline = now_ns() + (uint64_t)completion_wait_ms * 1000000u;
	struct mlx4_cqe *cqe;

	while (!(cqe = cqe_next(c))) {
		if (now_ns() > deadline) {
			check(false, "%s: no CQE in %u ms", what, completion_wait_ms);
			return false;
		}
		sched_yield();	/* leave the daemon a core on small machines */
	}
	*out = *cqe;
	c->ci++;
	/* Release: the CQE was read before its slot is given back (24-bit consumer index). */
	__atomic_store_n(c->dv.set_ci_db, htobe32(c->ci & 0xffffff), __ATOMIC_RELEASE);
	return true;
}

static bool cq_empty(struct dv_cq *c)
{
	return cqe_next(c) == NULL;
}

static uint32_t cqe_qpn(const struct mlx4_cqe *cqe)
{
	return be32toh(cqe->vlan_my_qpn) & MLX4_CQE_QPN_MASK;
}

static void expect_cqe(const struct mlx4_cqe *cqe, bool is_send, uint8_t opcode,
		       const struct dv_qp *q, uint16_t index, long byte_cnt, const char *what)
{
	bool send = cqe->owner_sr_opcode & MLX4_CQE_IS_SEND_MASK;
	uint8_t op = cqe->owner_sr_opcode & MLX4_CQE_OPCODE_MASK;

	check(send == is_send && op == opcode && be16toh(cqe->wqe_index) == index &&
		      cqe_qpn(cqe) == q->ibqp->qp_num &&
		      (byte_cnt < 0 || be32toh(cqe->byte_cnt) == (uint32_t)byte_cnt),
	      "%s: %s CQE opcode 0x%x (want 0x%x) wqe_index %u (want %u) qpn 0x%06x byte_cnt %u",
	      what, send ? "send" : "receive", op, opcode, be16toh(cqe->wqe_index), index,
	      cqe_qpn(cqe), be32toh(cqe->byte_cnt));
}

/* ---- send WQEs ---- */

/* One send WQE: raddr when rkey, an atomic segment when atomic, then data (lkey) or inline bytes (lkey 0). */
struct wqe {
	uint8_t opcode;
	__be32 imm;
	uint64_t raddr;
	uint32_t rkey;
	bool atomic;
	uint64_t swap_add, compare;
	uint64_t addr;
	uint32_t len;
	uint32_t lkey;
};

/*
 * An inline WQE goes to the BlueFlame page too, as libmlx4 sends one: the
 * WQE index in owner_opcode, the QPN in bf_qpn, copied in whole 64-byte
 * blocks to the half not used last.
 */
static void ring_blueflame(struct dv_qp *q, struct mlx4_wqe_ctrl_seg *hw, uint32_t ind, uint8_t size)
{
	size_t bytes = ((size_t)size * 16 + 63) & ~(size_t)63;
	volatile uint64_t *dst = (volatile uint64_t *)(q->bf + q->bf_offset);
	const uint64_t *src = (const uint64_t *)hw;

	hw->owner_opcode |= htobe32((ind & 0xffff) << 8);
	hw->bf_qpn |= q->dv.doorbell_qpn;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (size_t i = 0; i < bytes / sizeof(*dst); i++)
		dst[i] = src[i];
	q->bf_offset ^= BF_HALF;
	q->bf_rings++;
}

/*
 * Write w at the SQ's head, its owner word last with the owner bit of
 * this pass (odd passes set it), then ring: BlueFlame for an inline WQE,
 * else the send doorbell, through sdb and through cmd_fd's UAR page in
 * turn (sdb alone for a QP whose pages are not mapped). Returns the WQE's
 * index, its CQE's wqe_index.
 */
static uint16_t post_wqe(struct dv_qp *q, const struct wqe *w)
{
	uint32_t ind = q->sq_pi;
	uint8_t *wqe = (uint8_t *)q->dv.buf.buf + q->dv.sq.offset +
		       ((size_t)(ind & (q->dv.sq.wqe_cnt - 1)) << q->dv.sq.wqe_shift);
	struct mlx4_wqe_ctrl_seg ctrl, *hw = (void *)wqe;
	uint8_t *seg = wqe + sizeof(ctrl);
	uint8_t size = sizeof(ctrl) / 16;

	if (w->rkey) {
		struct mlx4_wqe_raddr_seg *r = (void *)seg;

		r->raddr = htobe64(w->raddr);
		r->rkey = htobe32(w->rkey);
		r->reserved = 0;
		seg += sizeof(*r);
		size++;
	}
	if (w->atomic) {
		struct mlx4_wqe_atomic_seg *a = (void *)seg;

		a->swap_add = htobe64(w->swap_add);
		a->compare = htobe64(w->compare);
		seg += sizeof(*a);
		size++;
	}
	if (w->lkey) {
		mlx4dv_set_data_seg((struct mlx4_wqe_data_seg *)seg, w->len, w->lkey, w->addr);
		size++;
	} else {
		/* One segment: it fits before the WQE's first 64-byte boundary. */
		struct mlx4_wqe_inline_seg *in = (void *)seg;

		memcpy(in + 1, (void *)(uintptr_t)w->addr, w->len);
		in->byte_count = htobe32(MLX4_INLINE_SEG | w->len);
		size += (uint8_t)((sizeof(*in) + w->len + 15) / 16);
	}
	mlx4dv_set_ctrl_seg(&ctrl, (ind & q->dv.sq.wqe_cnt ? 1u << 31 : 0) | w->opcode, size,
			    MLX4_WQE_CTRL_CQ_UPDATE, w->imm);
	memcpy((uint8_t *)hw + sizeof(hw->owner_opcode), (uint8_t *)&ctrl + sizeof(ctrl.owner_opcode),
	       sizeof(ctrl) - sizeof(ctrl.owner_opcode));
	/* Release: the whole WQE is written before the owner word hands it over. */
	__atomic_store_n(&hw->owner_opcode, ctrl.owner_opcode, __ATOMIC_RELEASE);
	q->sq_pi++;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (q->bf && !w->lkey && size * 16 <= BF_HALF) {
		ring_blueflame(q, hw, ind, size);
	} else if (q->uar && (ind & 1)) {
		/* The send doorbell register takes the QP number, already big-endian. */
		*(volatile uint32_t *)(q->uar + MLX4_SEND_DOORBELL) = q->dv.doorbell_qpn;
		q->uar_rings++;
	} else {
		*(volatile uint32_t *)q->dv.sdb = q->dv.doorbell_qpn;
	}
	return (uint16_t)ind;
}

/* One receive WQE over (addr, len, lkey), ended by an invalid-lkey segment when the stride has room. */
static uint16_t post_recv_wqe(struct dv_qp *q, uint64_t addr, uint32_t len, uint32_t lkey)
{
	uint32_t ind = q->rq_head;
	struct mlx4_wqe_data_seg *d =
		(void *)((uint8_t *)q->dv.buf.buf + q->dv.rq.offset +
			 ((size_t)(ind & (q->dv.rq.wqe_cnt - 1)) << q->dv.rq.wqe_shift));

	mlx4dv_set_data_seg(d, len, lkey, addr);
	if ((1u << q->dv.rq.wqe_shift) > sizeof(*d))
		mlx4dv_set_data_seg(d + 1, 0, MLX4_INVALID_LKEY, 0);
	q->rq_head++;
	/* Release: the WQE is in memory before the doorbell record counts it. */
	__atomic_store_n(q->dv.rdb, htobe32(q->rq_head & 0xffff), __ATOMIC_RELEASE);
	return (uint16_t)ind;
}

/* ---- setup ---- */

/* Every ctrl starts owned by the device's stale pass, every CQE by hardware: mlx4 rings. */
static bool rings_are_mlx4(struct dv_side *d)
{
	for (uint32_t i = 0; i < d->qp.dv.sq.wqe_cnt; i++) {
		const struct mlx4_wqe_ctrl_seg *c =
			(const void *)((const uint8_t *)d->qp.dv.buf.buf + d->qp.dv.sq.offset +
				       ((size_t)i << d->qp.dv.sq.wqe_shift));

		if (!(be32toh(c->owner_opcode) & (1u << 31)))
			return false;
	}
	return cq_empty(&d->scq) && cq_empty(&d->rcq);
}

/*
 * The QP's UAR page and BlueFlame page from cmd_fd, as libmlx4 maps a
 * context's: UAR at uar_mmap_offset, BlueFlame one page on, write-only.
 */
static bool doorbell_pages_map(struct dv_qp *q, int cmd_fd)
{
	volatile uint32_t *probe;
	void *bad;
	int bad_errno;

	q->page = (size_t)sysconf(_SC_PAGESIZE);
	check(q->dv.comp_mask & MLX4DV_QP_MASK_UAR_MMAP_OFFSET,
	      "QP 0x%06x: uar_mmap_offset 0x%llx", q->ibqp->qp_num,
	      (unsigned long long)q->dv.uar_mmap_offset);
	q->uar = mmap(NULL, q->page, PROT_WRITE, MAP_SHARED, cmd_fd, q->dv.uar_mmap_offset);
	q->bf = mmap(NULL, q->page, PROT_WRITE, MAP_SHARED, cmd_fd,
		     q->dv.uar_mmap_offset + (off_t)q->page);
	bad = mmap(NULL, 2 * q->page, PROT_WRITE, MAP_SHARED, cmd_fd, q->dv.uar_mmap_offset);
	bad_errno = errno;
	if (bad != MAP_FAILED)
		munmap(bad, 2 * q->page);
	check(q->uar != MAP_FAILED && q->bf != MAP_FAILED && bad == MAP_FAILED && bad_errno == EINVAL,
	      "cmd_fd maps the UAR and BlueFlame pages, and refuses two pages with EINVAL (%s)",
	      strerror(bad_errno));
	if (q->uar == MAP_FAILED || q->bf == MAP_FAILED) {
		q->uar = q->bf = NULL;
		return false;
	}
	/* Written through cmd_fd's page, read through sdb's: the same UAR. */
	probe = (volatile uint32_t *)((uint8_t *)q->dv.sdb - MLX4_SEND_DOORBELL + UAR_PROBE);
	*(volatile uint32_t *)(q->uar + UAR_PROBE) = q->ibqp->qp_num;
	check(*probe == q->ibqp->qp_num, "cmd_fd's UAR page is the page of sdb");
	*(volatile uint32_t *)(q->uar + UAR_PROBE) = 0;
	return true;
}

static void doorbell_pages_unmap(struct dv_qp *q)
{
	if (q->uar)
		munmap(q->uar, q->page);
	if (q->bf)
		munmap(q->bf, q->page);
}

static bool dv_side_init(struct dv_side *d, struct side *s)
{
	struct mlx4dv_obj obj = {
		.qp = { s->qp, &d->qp.dv },
		.cq = { s->send_cq, &d->scq.dv },
	};
	struct mlx4dv_obj robj = { .cq = { s->recv_cq, &d->rcq.dv } };
	int ret;

	memset(d, 0, sizeof(*d));
	d->qp.ibqp = s->qp;
	d->qp.dv.comp_mask = MLX4DV_QP_MASK_UAR_MMAP_OFFSET;
	d->scq.dv.comp_mask = MLX4DV_CQ_MASK_UAR;
	ret = mlx4dv_init_obj(&obj, MLX4DV_OBJ_QP | MLX4DV_OBJ_CQ);
	if (!ret)
		ret = mlx4dv_init_obj(&robj, MLX4DV_OBJ_CQ);
	check(ret == 0, "mlx4dv_init_obj of QP 0x%06x and its CQs: %s", s->qp->qp_num, strerror(ret));
	if (ret)
		return false;
	check(d->qp.dv.doorbell_qpn == htobe32(s->qp->qp_num << 8) &&
		      d->qp.dv.sq.wqe_shift >= 6 && d->qp.dv.rq.wqe_cnt >= s->cap.max_recv_wr &&
		      d->qp.dv.sq.wqe_cnt > s->cap.max_send_wr &&
		      (size_t)d->qp.dv.sq.offset + ((size_t)d->qp.dv.sq.wqe_cnt << d->qp.dv.sq.wqe_shift) <=
			      d->qp.dv.buf.length,
	      "QP 0x%06x: doorbell_qpn, SQ of %u WQEs of %u bytes at %d, RQ of %u at %d, in %zu bytes",
	      s->qp->qp_num, d->qp.dv.sq.wqe_cnt, 1u << d->qp.dv.sq.wqe_shift, d->qp.dv.sq.offset,
	      d->qp.dv.rq.wqe_cnt, d->qp.dv.rq.offset, d->qp.dv.buf.length);
	check((d->scq.dv.cqe_size == 32 || d->scq.dv.cqe_size == 64) &&
		      d->scq.dv.cqe_size == d->rcq.dv.cqe_size &&
		      !(d->scq.dv.cqe_cnt & (d->scq.dv.cqe_cnt - 1)) &&
		      d->scq.dv.buf.length >= (size_t)d->scq.dv.cqe_cnt * d->scq.dv.cqe_size &&
		      (d->scq.dv.comp_mask & MLX4DV_CQ_MASK_UAR) && d->scq.dv.cq_uar,
	      "CQs of %u %d-byte CQEs, a CQ doorbell page", d->scq.dv.cqe_cnt, d->scq.dv.cqe_size);
	return doorbell_pages_map(&d->qp, s->qp->context->cmd_fd);
}

/* mlx4dv_create_qp's checks and its granted inline receive size, on a QP of its own. */
static void create_qp_checks(const struct mlx4dv_context *m4)
{
	struct ibv_cq *cq = ibv_create_cq(dev_b.ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex attr = { .qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
					    .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						     .max_send_sge = 1, .max_recv_sge = 1 },
					    .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = dev_b.pd };
	struct mlx4dv_qp_init_attr dv = { .comp_mask = MLX4DV_QP_INIT_ATTR_MASK_RESERVED };
	struct ibv_qp *qp;

	if (!cq) {
		check(false, "ibv_create_cq: %s", strerror(errno));
		return;
	}
	errno = 0;
	qp = mlx4dv_create_qp(dev_b.ctx, &attr, &dv);
	check(!qp && errno == EINVAL, "mlx4dv_create_qp with an unknown comp_mask bit: EINVAL (%s)",
	      strerror(errno));
	dv = (struct mlx4dv_qp_init_attr){ .comp_mask = MLX4DV_QP_INIT_ATTR_MASK_INL_RECV,
					   .inl_recv_sz = INL_RECV_WANT };
	qp = mlx4dv_create_qp(dev_b.ctx, &attr, &dv);
	check(qp && dv.inl_recv_sz >= INL_RECV_WANT && !(dv.inl_recv_sz & (dv.inl_recv_sz - 1)) &&
		      dv.inl_recv_sz <= m4->max_inl_recv_sz,
	      "mlx4dv_create_qp with inl_recv_sz %u: %u granted (max_inl_recv_sz %u): %s",
	      INL_RECV_WANT, dv.inl_recv_sz, m4->max_inl_recv_sz, qp ? "made" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

/* ---- traffic ---- */

static void send_recv(struct buf *src, struct buf *dst, uint32_t len, bool inl, unsigned int seed,
		      const char *what)
{
	struct wqe w = { .opcode = MLX4_OPCODE_SEND, .addr = (uintptr_t)src->p, .len = len,
			 .lkey = inl ? 0 : src->mr->lkey };
	struct mlx4_cqe cqe;
	uint16_t sidx, ridx;

	fill_pattern(src->p, len, seed, 0);
	memset(dst->p, UNTOUCHED, len + 1);
	ridx = post_recv_wqe(&sb.qp, (uintptr_t)dst->p, MSG_LEN, dst->mr->lkey);
	sidx = post_wqe(&sa.qp, &w);
	if (cqe_poll(&sa.scq, &cqe, what))
		expect_cqe(&cqe, true, MLX4_OPCODE_SEND, &sa.qp, sidx, -1, what);
	if (cqe_poll(&sb.rcq, &cqe, what))
		expect_cqe(&cqe, false, MLX4_RECV_OPCODE_SEND, &sb.qp, ridx, len, what);
	check_pattern(dst->p, len, seed, 0, what);
	check_untouched(dst->p + len, 1, UNTOUCHED, what);
}

/* SENDs of every size class, gathered and inline, until the SQ and the CQs went round PASSES times. */
static void sends(struct buf *a_buf, struct buf *b_buf)
{
	uint32_t want = sa.qp.dv.sq.wqe_cnt, n, quiet = 0;
	char what[64];

	if (sa.scq.dv.cqe_cnt > want)
		want = sa.scq.dv.cqe_cnt;
	if (sb.rcq.dv.cqe_cnt > want)
		want = sb.rcq.dv.cqe_cnt;
	want *= PASSES;
	for (n = 0; n < want; n++) {
		bool inl = n % 3 == 2;
		uint32_t len = inl ? 1 + n % INLINE_LEN : 1 + (n * 997) % MSG_LEN;

		snprintf(what, sizeof(what), "SEND %u (%u bytes%s)", n, len, inl ? ", inline" : "");
		send_recv(a_buf, b_buf, len, inl, n, what);
		quiet += cq_empty(&sa.scq) && cq_empty(&sb.rcq);
	}
	check(quiet == want && sa.qp.sq_pi >= PASSES * sa.qp.dv.sq.wqe_cnt &&
		      sa.scq.ci >= PASSES * sa.scq.dv.cqe_cnt && sb.rcq.ci >= PASSES * sb.rcq.dv.cqe_cnt,
	      "%u SENDs: SQ went round %u times, the CQs %u and %u times, no stray CQE", want,
	      sa.qp.sq_pi / sa.qp.dv.sq.wqe_cnt, sa.scq.ci / sa.scq.dv.cqe_cnt,
	      sb.rcq.ci / sb.rcq.dv.cqe_cnt);
}

static void writes_reads(struct buf *a_buf, struct buf *b_buf)
{
	struct wqe w = { .opcode = MLX4_OPCODE_RDMA_WRITE, .raddr = raddr_of(b_buf, 0),
			 .rkey = b_buf->mr->rkey, .addr = (uintptr_t)a_buf->p, .len = MSG_LEN,
			 .lkey = a_buf->mr->lkey };
	struct mlx4_cqe cqe;
	uint16_t idx, ridx;

	fill_pattern(a_buf->p, MSG_LEN, 7, 0);
	memset(b_buf->p, UNTOUCHED, MSG_LEN);
	idx = post_wqe(&sa.qp, &w);
	if (cqe_poll(&sa.scq, &cqe, "WRITE"))
		expect_cqe(&cqe, true, MLX4_OPCODE_RDMA_WRITE, &sa.qp, idx, -1, "WRITE");
	check_pattern(b_buf->p, MSG_LEN, 7, 0, "WRITE: data at the responder");
	check(cq_empty(&sb.rcq), "WRITE: no receive CQE at the responder");

	/* With immediate: the data, and a receive WQE consumed for the immediate. */
	fill_pattern(a_buf->p, MSG_LEN / 2, 8, 0);
	memset(b_buf->p, UNTOUCHED, MSG_LEN);
	ridx = post_recv_wqe(&sb.qp, (uintptr_t)b_buf->p, 64, b_buf->mr->lkey);
	w.opcode = MLX4_OPCODE_RDMA_WRITE_IMM;
	w.imm = htobe32(IMM);
	w.len = MSG_LEN / 2;
	idx = post_wqe(&sa.qp, &w);
	if (cqe_poll(&sa.scq, &cqe, "WRITE with immediate"))
		expect_cqe(&cqe, true, MLX4_OPCODE_RDMA_WRITE_IMM, &sa.qp, idx, -1,
			   "WRITE with immediate");
	if (cqe_poll(&sb.rcq, &cqe, "WRITE with immediate: receive")) {
		expect_cqe(&cqe, false, MLX4_RECV_OPCODE_RDMA_WRITE_IMM, &sb.qp, ridx, MSG_LEN / 2,
			   "WRITE with immediate: receive");
		check(cqe.immed_rss_invalid == htobe32(IMM), "WRITE with immediate: 0x%08x in the CQE",
		      be32toh(cqe.immed_rss_invalid));
	}
	check_pattern(b_buf->p, MSG_LEN / 2, 8, 0, "WRITE with immediate: data at the responder");
	check_untouched(b_buf->p + MSG_LEN / 2, MSG_LEN / 2, UNTOUCHED,
			"WRITE with immediate: nothing past it");

	fill_pattern(b_buf->p, MSG_LEN, 9, 0);
	memset(a_buf->p, UNTOUCHED, MSG_LEN);
	w = (struct wqe){ .opcode = MLX4_OPCODE_RDMA_READ, .raddr = raddr_of(b_buf, 0),
			  .rkey = b_buf->mr->rkey, .addr = (uintptr_t)a_buf->p, .len = MSG_LEN,
			  .lkey = a_buf->mr->lkey };
	idx = post_wqe(&sa.qp, &w);
	if (cqe_poll(&sa.scq, &cqe, "READ"))
		expect_cqe(&cqe, true, MLX4_OPCODE_RDMA_READ, &sa.qp, idx, MSG_LEN, "READ");
	check_pattern(a_buf->p, MSG_LEN, 9, 0, "READ: data at the requester");
}

/* One atomic on b's first 8 bytes: the value it found lands in a's first 8. */
static void atomic_one(struct buf *a_buf, struct buf *b_buf, uint8_t opcode, uint64_t swap_add,
		       uint64_t compare, uint64_t found, uint64_t after, const char *what)
{
	struct wqe w = { .opcode = opcode, .raddr = raddr_of(b_buf, 0), .rkey = b_buf->mr->rkey,
			 .atomic = true, .swap_add = swap_add, .compare = compare,
			 .addr = (uintptr_t)a_buf->p, .len = 8, .lkey = a_buf->mr->lkey };
	struct mlx4_cqe cqe;
	uint64_t got, now;
	uint16_t idx;

	memset(a_buf->p, UNTOUCHED, 16);
	idx = post_wqe(&sa.qp, &w);
	/* byte_cnt unchecked: libmlx4 reports 8 for atomics without reading it. */
	if (cqe_poll(&sa.scq, &cqe, what))
		expect_cqe(&cqe, true, opcode, &sa.qp, idx, -1, what);
	memcpy(&got, a_buf->p, 8);
	memcpy(&now, b_buf->p, 8);
	check(got == found && now == after, "%s: found 0x%016llx (want 0x%016llx), left 0x%016llx (want 0x%016llx)",
	      what, (unsigned long long)got, (unsigned long long)found, (unsigned long long)now,
	      (unsigned long long)after);
	check_untouched(a_buf->p + 8, 8, UNTOUCHED, what);
}

static void atomics(struct buf *a_buf, struct buf *b_buf)
{
	uint64_t v = ATOMIC_INIT;

	memcpy(b_buf->p, &v, 8);
	atomic_one(a_buf, b_buf, MLX4_OPCODE_ATOMIC_CS, ATOMIC_SWAP, ATOMIC_INIT, ATOMIC_INIT,
		   ATOMIC_SWAP, "compare and swap");
	atomic_one(a_buf, b_buf, MLX4_OPCODE_ATOMIC_CS, ATOMIC_INIT, ATOMIC_INIT, ATOMIC_SWAP,
		   ATOMIC_SWAP, "compare and swap, unequal");
	atomic_one(a_buf, b_buf, MLX4_OPCODE_ATOMIC_FA, ATOMIC_ADD, 0, ATOMIC_SWAP,
		   ATOMIC_SWAP + ATOMIC_ADD, "fetch and add");
}

/* A WRITE with a bad rkey: the requester's error CQE names the WQE and the remote access syndrome. */
static void bad_rkey(struct buf *a_buf, struct buf *b_buf)
{
	struct wqe w = { .opcode = MLX4_OPCODE_RDMA_WRITE, .raddr = raddr_of(b_buf, 0),
			 .rkey = b_buf->mr->rkey ^ 0x5500, .addr = (uintptr_t)a_buf->p, .len = 64,
			 .lkey = a_buf->mr->lkey };
	struct mlx4_cqe cqe;
	uint16_t idx;

	memset(b_buf->p, UNTOUCHED, 64);
	idx = post_wqe(&sa.qp, &w);
	if (cqe_poll(&sa.scq, &cqe, "WRITE with a bad rkey")) {
		const struct mlx4_err_cqe *err = (const void *)&cqe;

		expect_cqe(&cqe, true, MLX4_CQE_OPCODE_ERROR, &sa.qp, idx, -1, "WRITE with a bad rkey");
		check(err->syndrome == MLX4_CQE_SYNDROME_REMOTE_ACCESS_ERR,
		      "WRITE with a bad rkey: error CQE, syndrome 0x%02x (want 0x%02x)", err->syndrome,
		      MLX4_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	}
	check_untouched(b_buf->p, 64, UNTOUCHED, "WRITE with a bad rkey: nothing written");
}

/* ---- SRQ ---- */

struct dv_srq {
	struct mlx4dv_srq dv;
	uint16_t counter;		/* WQEs posted: the doorbell record's word */
};

static struct mlx4_wqe_srq_next_seg *srq_wqe(struct dv_srq *q, uint32_t index)
{
	return (void *)((uint8_t *)q->dv.buf.buf + ((size_t)index << q->dv.wqe_shift));
}

/* Post one receive (addr, len, lkey) at the head of the free list. Returns its index. */
static uint16_t srq_post(struct dv_srq *q, uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct mlx4_wqe_srq_next_seg *next = srq_wqe(q, (uint32_t)q->dv.head);
	struct mlx4_wqe_data_seg *d = (void *)(next + 1);
	uint16_t index = (uint16_t)q->dv.head;

	mlx4dv_set_data_seg(d, len, lkey, addr);
	if ((1u << q->dv.wqe_shift) >= sizeof(*next) + 2 * sizeof(*d))
		mlx4dv_set_data_seg(d + 1, 0, MLX4_INVALID_LKEY, 0);
	q->dv.head = be16toh(next->next_wqe_index);
	q->counter++;
	/* Release: the WQE is in memory before the doorbell record counts it. */
	__atomic_store_n(q->dv.db, htobe32(q->counter), __ATOMIC_RELEASE);
	return index;
}

/* The WQE a receive CQE named goes back to the free list after the tail. */
static void srq_free(struct dv_srq *q, uint16_t index)
{
	srq_wqe(q, (uint32_t)q->dv.tail)->next_wqe_index = htobe16(index);
	q->dv.tail = index;
}

/*
 * A second RC pair whose responder takes its receives from an SRQ the
 * program posts itself; each receive CQE's wqe_index names the SRQ WQE,
 * whose buffer holds the data.
 */
static void srq_sends(struct buf *a_buf, struct buf *slots)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = SRQ_WR, .max_sge = 1 } };
	struct ibv_qp_cap cap = { .max_send_wr = 8, .max_recv_wr = 1, .max_send_sge = 1,
				  .max_inline_data = INLINE_LEN };
	struct ibv_cq *acq = ibv_create_cq(dev_a.ctx, CQ_DEPTH, NULL, NULL, 0);
	struct ibv_cq *bcq = ibv_create_cq(dev_b.ctx, CQ_DEPTH, NULL, NULL, 0);
	struct ibv_srq *srq = ibv_create_srq(dev_b.pd, &sattr);
	struct ibv_qp_init_attr battr = { .qp_type = IBV_QPT_RC, .send_cq = bcq, .recv_cq = bcq,
					  .srq = srq, .cap = { .max_send_wr = 1, .max_send_sge = 1 } };
	struct ibv_qp *aqp = NULL, *bqp = NULL;
	uint64_t addr_of[1024] = { 0 };
	struct dv_side a2 = { 0 };
	struct dv_cq bcq_dv = { 0 };
	struct dv_srq s = { 0 };
	struct mlx4dv_obj obj;
	unsigned int posted = 0, done = 0, idle_max;
	int ret = -1;

	if (acq && bcq && srq) {
		aqp = qp_create(&dev_a, acq, acq, false, &cap);
		bqp = ibv_create_qp(dev_b.pd, &battr);
	}
	if (aqp && bqp) {
		ret = qp_connect(aqp, bqp->qp_num, &dev_b.gid, PSN_A, PSN_B, &side_default.knobs);
		if (!ret)
			ret = qp_connect(bqp, aqp->qp_num, &dev_a.gid, PSN_B, PSN_A,
					 &side_default.knobs);
	}
	check(ret == 0, "SRQ pair made and connected: %s", ret < 0 ? strerror(errno) : strerror(ret));
	if (ret)
		goto out;
	obj = (struct mlx4dv_obj){ .qp = { aqp, &a2.qp.dv }, .cq = { acq, &a2.scq.dv } };
	ret = mlx4dv_init_obj(&obj, MLX4DV_OBJ_QP | MLX4DV_OBJ_CQ);
	obj = (struct mlx4dv_obj){ .cq = { bcq, &bcq_dv.dv }, .srq = { srq, &s.dv } };
	if (!ret)
		ret = mlx4dv_init_obj(&obj, MLX4DV_OBJ_CQ | MLX4DV_OBJ_SRQ);
	idle_max = s.dv.wqe_shift >= 4 ? (unsigned int)(s.dv.buf.length >> s.dv.wqe_shift) : 0;
	check(ret == 0 && idle_max > SRQ_WR && idle_max <= 1024 && s.dv.head != s.dv.tail,
	      "mlx4dv_init_obj of the SRQ: %u WQEs of %u bytes, head %d tail %d: %s", idle_max,
	      1u << s.dv.wqe_shift, s.dv.head, s.dv.tail, strerror(ret));
	if (ret || idle_max <= SRQ_WR || idle_max > 1024)
		goto out;
	a2.qp.ibqp = aqp;
	/* Half the slots posted; each completed one goes back to the free list and is posted again. */
	for (; posted < SRQ_WR / 2; posted++) {
		uint8_t *p = slots->p + (size_t)posted * MSG_LEN;

		addr_of[srq_post(&s, (uintptr_t)p, MSG_LEN, slots->mr->lkey)] = (uintptr_t)p;
	}
	for (done = 0; done < SRQ_ROUNDS; done++) {
		uint32_t len = done % 2 ? 1 + done : MSG_LEN - done;
		struct wqe w = { .opcode = MLX4_OPCODE_SEND, .addr = (uintptr_t)a_buf->p, .len = len,
				 .lkey = a_buf->mr->lkey };
		uint8_t *slot = slots->p + (size_t)(done % SRQ_WR) * MSG_LEN;
		struct mlx4_cqe cqe;
		uint16_t sidx, ridx;
		uint8_t *dst;

		fill_pattern(a_buf->p, len, 100 + done, 0);
		sidx = post_wqe(&a2.qp, &w);
		if (!cqe_poll(&a2.scq, &cqe, "SRQ SEND"))
			break;
		expect_cqe(&cqe, true, MLX4_OPCODE_SEND, &a2.qp, sidx, -1, "SRQ SEND");
		if (!cqe_poll(&bcq_dv, &cqe, "SRQ receive"))
			break;
		ridx = be16toh(cqe.wqe_index);
		check((cqe.owner_sr_opcode & MLX4_CQE_OPCODE_MASK) == MLX4_RECV_OPCODE_SEND &&
			      !(cqe.owner_sr_opcode & MLX4_CQE_IS_SEND_MASK) && cqe_qpn(&cqe) == bqp->qp_num &&
			      be32toh(cqe.byte_cnt) == len && ridx < idle_max && addr_of[ridx] == (uintptr_t)slot,
		      "SRQ receive %u: opcode 0x%x qpn 0x%06x byte_cnt %u (want %u) wqe_index %u", done,
		      cqe.owner_sr_opcode & MLX4_CQE_OPCODE_MASK, cqe_qpn(&cqe), be32toh(cqe.byte_cnt), len,
		      ridx);
		dst = ridx < idle_max ? (uint8_t *)(uintptr_t)addr_of[ridx] : slot;
		check_pattern(dst, len, 100 + done, 0, "SRQ receive");
		memset(dst, UNTOUCHED, len);
		srq_free(&s, ridx);
		slot = slots->p + (size_t)(posted++ % SRQ_WR) * MSG_LEN;
		addr_of[srq_post(&s, (uintptr_t)slot, MSG_LEN, slots->mr->lkey)] = (uintptr_t)slot;
	}
	check(done == SRQ_ROUNDS, "%u SENDs through an SRQ of %u WQEs posted by the program", done,
	      idle_max);
out:
	if (bqp)
		ibv_destroy_qp(bqp);
	if (aqp)
		ibv_destroy_qp(aqp);
	if (srq)
		ibv_destroy_srq(srq);
	if (bcq)
		ibv_destroy_cq(bcq);
	if (acq)
		ibv_destroy_cq(acq);
}

/* ---- main ---- */

/* Both sides: a by verbs, b's QP by mlx4dv_create_qp (the verbs path under it). */
static bool pair_make(void)
{
	struct side_spec spec = side_default;
	struct ibv_qp_init_attr_ex attr = { .qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD,
					    .pd = dev_b.pd };
	struct mlx4dv_qp_init_attr dv = { 0 };
	struct side *b = &pair.b;
	int ret;

	spec.cap.max_inline_data = INLINE_LEN;
	memset(&pair, 0, sizeof(pair));
	if (!side_open(&pair.a, &dev_a, &spec))
		return false;
	b->dev = &dev_b;
	b->send_cq = ibv_create_cq(dev_b.ctx, spec.send_cqe, NULL, NULL, 0);
	b->recv_cq = ibv_create_cq(dev_b.ctx, spec.recv_cqe, NULL, NULL, 0);
	if (b->send_cq && b->recv_cq) {
		attr.send_cq = b->send_cq;
		attr.recv_cq = b->recv_cq;
		attr.cap = spec.cap;
		b->qp = mlx4dv_create_qp(dev_b.ctx, &attr, &dv);
		b->cap = attr.cap;
	}
	check(b->qp && dv.inl_recv_sz >= sizeof(struct mlx4_wqe_data_seg),
	      "responder QP by mlx4dv_create_qp (receive stride %u): %s", dv.inl_recv_sz,
	      b->qp ? "made" : strerror(errno));
	if (!b->qp)
		return false;
	ret = qp_connect(pair.a.qp, b->qp->qp_num, &dev_b.gid, PSN_A, PSN_B, &spec.knobs);
	if (!ret)
		ret = qp_connect(b->qp, pair.a.qp->qp_num, &dev_a.gid, PSN_B, PSN_A, &spec.knobs);
	check(ret == 0, "connecting the QPs: %s", strerror(ret));
	return ret == 0;
}

int main(int argc, char **argv)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC;
	struct mlx4dv_context m4 = { 0 };
	struct buf *a_buf, *b_buf, *slots;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3) {
		fprintf(stderr, "usage: %s DEVICE_A DEVICE_B\n", argv[0]);
		return 1;
	}
	if (!dev_open(&dev_a, argv[1]) || !dev_open(&dev_b, argv[2]))
		return checks_finish();
	ret = mlx4dv_query_device(dev_a.ctx, &m4);
	check(ret == 0 && m4.version == 0 && m4.max_inl_recv_sz >= sizeof(struct mlx4_wqe_data_seg),
	      "mlx4dv_query_device: version %u, max_inl_recv_sz %u: %s", m4.version,
	      m4.max_inl_recv_sz, strerror(ret));
	a_buf = buf_new(&dev_a, MSG_LEN + 64, MSG_LEN + 64, access, UNTOUCHED);
	b_buf = buf_new(&dev_b, MSG_LEN + 64, MSG_LEN + 64, access, UNTOUCHED);
	slots = buf_new(&dev_b, SRQ_WR * MSG_LEN, SRQ_WR * MSG_LEN, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	if (!a_buf || !b_buf || !slots || !pair_make() || !dv_side_init(&sa, &pair.a) ||
	    !dv_side_init(&sb, &pair.b))
		goto out;
	check(rings_are_mlx4(&sa) && rings_are_mlx4(&sb),
	      "rings in mlx4 format: every WQE and CQE the device's until posted or written");
	printf("== mlx4dv_create_qp\n");
	create_qp_checks(&m4);
	printf("== SEND\n");
	sends(a_buf, b_buf);
	printf("== WRITE, WRITE with immediate, READ\n");
	writes_reads(a_buf, b_buf);
	printf("== atomics\n");
	atomics(a_buf, b_buf);
	printf("== SRQ\n");
	srq_sends(a_buf, slots);
	printf("== error CQE\n");
	bad_rkey(a_buf, b_buf);
	check(sa.qp.uar_rings && sa.qp.bf_rings,
	      "the requester rang %u doorbells through cmd_fd's UAR and %u BlueFlame copies",
	      sa.qp.uar_rings, sa.qp.bf_rings);
out:
	doorbell_pages_unmap(&sa.qp);
	doorbell_pages_unmap(&sb.qp);
	pair_close(&pair);
	bufs_free();
	dev_close(&dev_b);
	dev_close(&dev_a);
	return checks_finish();
}
