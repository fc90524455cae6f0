/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Scatter to CQE as a ConnectX does it, seen through ordinary verbs: RC
 * QPs from mlx5dv_create_qp on CQs of 64- or 128-byte CQEs; each
 * completion's CQE is looked at first through mlx5dv_init_obj (does its
 * op_own say MLX5_INLINE_SCATTER_32 or _64?), then polled with
 * ibv_poll_cq (or ibv_start_poll), which must put the data where the WQE
 * said. Received SENDs of up to 32 bytes (64-byte CQE) or 64 (128-byte)
 * come in the CQE unless DISABLE_SCATTER_TO_CQE or MLX5_SCATTER_TO_CQE=0
 * says otherwise; READ and atomic replies only when the QP signals every
 * WQE or ALLOW_SCATTER_TO_CQE; a QP in packet-based credit mode works.
 *
 *   mlx5dv_scatter DEVICE_A DEVICE_B
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "tests/e2e/harness/verbs_pair.h"

#define BUF_LEN 4096
#define SCATTER_BITS (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64)

/* A connected RC pair, each QP on one CQ of its own, both CQs handed out for peeking. */
struct sc_pair {
	struct ibv_cq_ex *cq[2];
	struct mlx5dv_cq dv[2];
	uint32_t ci[2];			/* CQEs polled so far: the next one's index */
	struct ibv_qp *qp[2];
};

struct sc_spec {
	uint32_t cqe_size;
	uint32_t create_flags;		/* mlx5dv create_flags, 0 without the comp_mask bit */
	bool sig_all;
};

static struct buf *src, *dst, *remote;	/* on A; on B for receives; on B for READ/atomic */
static unsigned int seed = 1;

static struct dev *side_dev(int side)
{
	return side ? &dev_b : &dev_a;
}

static bool sc_open(struct sc_pair *p, const struct sc_spec *spec)
{
	struct mlx5dv_cq_init_attr cq_dv = { .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE,
					     .cqe_size = spec->cqe_size };
	struct mlx5dv_qp_init_attr qp_dv = { .create_flags = spec->create_flags };
	int i, ret = 0;

	memset(p, 0, sizeof(*p));
	if (spec->create_flags)
		qp_dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS;
	for (i = 0; i < 2; i++) {
		struct ibv_cq_init_attr_ex cq_attr = { .cqe = CQ_DEPTH,
						       .wc_flags = IBV_WC_STANDARD_FLAGS };
		struct ibv_qp_init_attr_ex qp_attr = {
			.qp_type = IBV_QPT_RC, .sq_sig_all = spec->sig_all,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2,
				 .max_recv_sge = 2 },
			.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = side_dev(i)->pd,
		};
		struct mlx5dv_obj obj = { .cq = { NULL, &p->dv[i] } };

		p->cq[i] = mlx5dv_create_cq(side_dev(i)->ctx, &cq_attr, &cq_dv);
		if (!p->cq[i])
			break;
		qp_attr.send_cq = qp_attr.recv_cq = obj.cq.in = ibv_cq_ex_to_cq(p->cq[i]);
		p->qp[i] = mlx5dv_create_qp(side_dev(i)->ctx, &qp_attr, &qp_dv);
		if (!p->qp[i] || mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ))
			break;
	}
	if (i < 2) {
		check(false, "%u-byte CQEs, create_flags 0x%x: mlx5dv_create_cq/qp, init_obj: %s",
		      spec->cqe_size, spec->create_flags, strerror(errno));
		return false;
	}
	ret = qp_connect(p->qp[0], p->qp[1]->qp_num, &dev_b.gid, PSN_A, PSN_B, &side_default.knobs);
	if (!ret)
		ret = qp_connect(p->qp[1], p->qp[0]->qp_num, &dev_a.gid, PSN_B, PSN_A,
				 &side_default.knobs);
	check(!ret, "an RC pair on %u-byte CQEs, create_flags 0x%x%s: %s", spec->cqe_size,
	      spec->create_flags, spec->sig_all ? ", every WQE signaled" : "", strerror(ret));
	return !ret;
}

static void sc_close(struct sc_pair *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->qp[i])
			ibv_destroy_qp(p->qp[i]);
		if (p->cq[i])
			ibv_destroy_cq(ibv_cq_ex_to_cq(p->cq[i]));
	}
}

/* Wait for side's next CQE and give its op_own scatter bits, -1 when none comes. */
static int peek_scatter(struct sc_pair *p, int side)
{
	struct mlx5dv_cq *dv = &p->dv[side];
	uint32_t ci = p->ci[side];
	uint8_t *entry = (uint8_t *)dv->buf + (size_t)(ci & (dv->cqe_cnt - 1)) * dv->cqe_size;
	struct mlx5_cqe64 *cqe = (void *)(entry + dv->cqe_size - sizeof(*cqe));
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

		if ((op_own >> 4) != MLX5_CQE_INVALID &&
		    (op_own & MLX5_CQE_OWNER_MASK) == !!(ci & dv->cqe_cnt))
			return op_own & SCATTER_BITS;
		if (elapsed_ms(&start) > completion_wait_ms)
			return -1;
		sched_yield();
	}
}

/* Poll side's next completion with ibv_poll_cq, or with ibv_start_poll when lazy. */
static bool sc_poll(struct sc_pair *p, int side, bool lazy, const char *what, struct want w,
		    struct ibv_wc *wc)
{
	struct ibv_poll_cq_attr attr = { 0 };
	struct ibv_cq_ex *cq = p->cq[side];
	bool ok;

	p->ci[side]++;
	if (!lazy)
		return expect_wc(ibv_cq_ex_to_cq(cq), what, w, wc);
	if (ibv_start_poll(cq, &attr)) {
		check(false, "%s: ibv_start_poll found no completion", what);
		return false;
	}
	wc->wr_id = cq->wr_id;
	wc->status = cq->status;
	wc->opcode = ibv_wc_read_opcode(cq);
	wc->byte_len = ibv_wc_read_byte_len(cq);
	wc->wc_flags = ibv_wc_read_wc_flags(cq);
	wc->imm_data = wc->wc_flags & IBV_WC_WITH_IMM ? ibv_wc_read_imm_data(cq) : 0;
	ibv_end_poll(cq);
	ok = wc->wr_id == w.wr_id && wc->status == w.status && (int)wc->opcode == w.opcode &&
	     wc->byte_len == (uint32_t)w.byte_len;
	check(ok, "%s: ibv_start_poll: wr_id 0x%llx %s opcode %d byte_len %u", what,
	      (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status), (int)wc->opcode,
	      wc->byte_len);
	return ok;
}

static void expect_scatter(int got, int want, uint32_t len, const char *what)
{
	check(got == want, "%s: %u bytes %s (op_own scatter bits 0x%x, want 0x%x)", what, len,
	      want ? "in the CQE" : "in memory", got, want);
}

/*
 * A SEND (with immediate when imm) of len bytes into a receive of two
 * SGEs split at len / 2: want says where the CQE has it; either way the
 * completion leaves it in dst.
 */
static void send_case(struct sc_pair *p, uint32_t len, bool imm, bool lazy, int want,
		      const char *what)
{
	struct ibv_sge rsge[2] = { sge_of(dst, 0, len / 2), sge_of(dst, len / 2, BUF_LEN - len / 2) };
	struct ibv_sge ssge = sge_of(src, 0, len);
	struct ibv_recv_wr rwr = { .wr_id = 0xbeef, .sg_list = rsge, .num_sge = 2 };
	struct ibv_send_wr swr = {
		.wr_id = 0xfeed, .sg_list = &ssge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, .imm_data = htobe32(0x1234abcd),
	};
	struct ibv_wc wc;

	fill_pattern(src->p, len, ++seed, 0);
	memset(dst->p, UNTOUCHED, BUF_LEN);
	if (!post_recv(p->qp[1], &rwr, what) || !post_send(p->qp[0], &swr, what))
		return;
	expect_scatter(peek_scatter(p, 1), want, len, what);
	if (sc_poll(p, 1, lazy, what, (struct want){ 0xbeef, IBV_WC_SUCCESS, IBV_WC_RECV, len }, &wc)) {
		check_pattern(dst->p, len, seed, 0, what);
		check_untouched(dst->p + len, 64, UNTOUCHED, what);
		if (imm)
			check((wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htobe32(0x1234abcd),
			      "%s: immediate 0x%08x", what, be32toh(wc.imm_data));
	}
	peek_scatter(p, 0);
	sc_poll(p, 0, false, what, (struct want){ 0xfeed, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, &wc);
}

/* A signaled READ of len bytes from remote into src: in its CQE when want says so. */
static void read_case(struct sc_pair *p, uint32_t len, int want, const char *what)
{
	struct ibv_sge sge[2] = { sge_of(src, 0, len / 3), sge_of(src, len / 3, len - len / 3) };
	struct ibv_send_wr wr = {
		.wr_id = 0x2ead, .sg_list = sge, .num_sge = 2, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr_of(remote, 0), .rkey = remote->mr->rkey },
	};
	struct ibv_wc wc;

	fill_pattern(remote->p, len, ++seed, 0);
	memset(src->p, UNTOUCHED, BUF_LEN);
	if (!post_send(p->qp[0], &wr, what))
		return;
	expect_scatter(peek_scatter(p, 0), want, len, what);
	if (sc_poll(p, 0, false, what, (struct want){ 0x2ead, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, len },
		    &wc)) {
		check_pattern(src->p, len, seed, 0, what);
		check_untouched(src->p + len, 64, UNTOUCHED, what);
	}
}

/* A FETCH_ADD whose original value comes in the CQE when want says so. */
static void atomic_case(struct sc_pair *p, int want, const char *what)
{
	struct ibv_sge sge = sge_of(src, 8, 8);
	struct ibv_send_wr wr = {
		.wr_id = 0xadd, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = raddr_of(remote, 64), .rkey = remote->mr->rkey,
			       .compare_add = 5 },
	};
	uint64_t orig = 0x0123456789abcdefull, got;
	struct ibv_wc wc;

	memcpy(remote->p + 64, &orig, sizeof(orig));
	memset(src->p, UNTOUCHED, 32);
	if (!post_send(p->qp[0], &wr, what))
		return;
	expect_scatter(peek_scatter(p, 0), want, 8, what);
	if (sc_poll(p, 0, false, what,
		    (struct want){ 0xadd, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, 8 }, &wc)) {
		memcpy(&got, src->p + 8, sizeof(got));
		check(got == orig && all_bytes(src->p, 8, UNTOUCHED) &&
			      all_bytes(src->p + 16, 16, UNTOUCHED),
		      "%s: the original value 0x%llx in the SGE, nothing around it", what,
		      (unsigned long long)got);
	}
}

/*
 * A small SEND into device memory (a zero-based MR): the driver's copy out
 * of a CQE could not reach it, so it goes there by DMA.
 */
static void send_to_dm(struct sc_pair *p)
{
	struct ibv_alloc_dm_attr attr = { .length = 4096 };
	struct ibv_dm *dm = ibv_alloc_dm(dev_b.ctx, &attr);
	struct ibv_mr *mr = dm ? ibv_reg_dm_mr(dev_b.pd, dm, 0, attr.length,
					      IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_sge rsge = { .addr = 64, .length = 64, .lkey = mr ? mr->lkey : 0 };
	struct ibv_sge ssge = sge_of(src, 0, 16);
	struct ibv_recv_wr rwr = { .wr_id = 0xd, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_send_wr swr = { .wr_id = 0xe, .sg_list = &ssge, .num_sge = 1,
				   .send_flags = IBV_SEND_SIGNALED, .opcode = IBV_WR_SEND };
	uint8_t got[16];
	struct ibv_wc wc;

	check(mr != NULL, "device memory registered zero-based: %s", strerror(errno));
	fill_pattern(src->p, 16, ++seed, 0);
	if (mr && post_recv(p->qp[1], &rwr, "SEND into device memory") &&
	    post_send(p->qp[0], &swr, "SEND into device memory")) {
		expect_scatter(peek_scatter(p, 1), 0, 16, "SEND of 16 bytes into device memory");
		if (sc_poll(p, 1, false, "SEND into device memory",
			    (struct want){ 0xd, IBV_WC_SUCCESS, IBV_WC_RECV, 16 }, &wc) &&
		    !ibv_memcpy_from_dm(got, dm, 64, sizeof(got)))
			check_pattern(got, sizeof(got), seed, 0, "SEND into device memory: the data");
		sc_poll(p, 0, false, "SEND into device memory",
			(struct want){ 0xe, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, &wc);
	}
	if (mr)
		ibv_dereg_mr(mr);
	if (dm)
		ibv_free_dm(dm);
}

static void with_pair(const struct sc_spec *spec, void (*run)(struct sc_pair *p))
{
	struct sc_pair p;

	if (sc_open(&p, spec))
		run(&p);
	sc_close(&p);
}

static void sends_64(struct sc_pair *p)
{
	send_case(p, 1, false, false, MLX5_INLINE_SCATTER_32, "SEND of 1 byte");
	send_case(p, 17, true, false, MLX5_INLINE_SCATTER_32, "SEND with immediate of 17 bytes");
	send_case(p, 32, false, true, MLX5_INLINE_SCATTER_32, "SEND of 32 bytes, ibv_start_poll");
	send_case(p, 33, false, false, 0, "SEND of 33 bytes");
	send_to_dm(p);
	/* Neither every WQE signaled nor allowed: replies go to memory. */
	read_case(p, 24, 0, "READ of 24 bytes without ALLOW");
	atomic_case(p, 0, "FETCH_ADD without ALLOW");
}

static void sends_128(struct sc_pair *p)
{
	send_case(p, 48, false, false, MLX5_INLINE_SCATTER_64, "SEND of 48 bytes");
	send_case(p, 64, true, true, MLX5_INLINE_SCATTER_64,
		  "SEND with immediate of 64 bytes, ibv_start_poll");
	send_case(p, 65, false, false, 0, "SEND of 65 bytes");
	read_case(p, 64, MLX5_INLINE_SCATTER_64, "READ of 64 bytes, ALLOW_SCATTER_TO_CQE");
	read_case(p, 65, 0, "READ of 65 bytes, ALLOW_SCATTER_TO_CQE");
	atomic_case(p, MLX5_INLINE_SCATTER_64, "FETCH_ADD, ALLOW_SCATTER_TO_CQE");
}

static void replies_allowed(struct sc_pair *p)
{
	read_case(p, 24, MLX5_INLINE_SCATTER_32, "READ of 24 bytes, ALLOW_SCATTER_TO_CQE");
	read_case(p, 33, 0, "READ of 33 bytes, ALLOW_SCATTER_TO_CQE");
	atomic_case(p, MLX5_INLINE_SCATTER_32, "FETCH_ADD, ALLOW_SCATTER_TO_CQE");
}

static void replies_sig_all(struct sc_pair *p)
{
	read_case(p, 30, MLX5_INLINE_SCATTER_32, "READ of 30 bytes, every WQE signaled");
	send_case(p, 20, false, false, MLX5_INLINE_SCATTER_32, "SEND of 20 bytes, every WQE signaled");
}

static void nothing_in_cqe(struct sc_pair *p)
{
	send_case(p, 16, false, false, 0, "SEND of 16 bytes");
	read_case(p, 16, 0, "READ of 16 bytes");
}

static void packet_credits(struct sc_pair *p)
{
	send_case(p, 3000, false, false, 0, "SEND of 3000 bytes in packet-based credit mode");
	send_case(p, 8, false, false, MLX5_INLINE_SCATTER_32,
		  "SEND of 8 bytes in packet-based credit mode");
}

static void cqe64_default(void)
{
	with_pair(&(struct sc_spec){ .cqe_size = 64 }, sends_64);
}

static void cqe128_allow(void)
{
	with_pair(&(struct sc_spec){ .cqe_size = 128,
				     .create_flags = MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE },
		  sends_128);
}

static void cqe64_allow(void)
{
	with_pair(&(struct sc_spec){ .cqe_size = 64,
				     .create_flags = MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE },
		  replies_allowed);
}

static void cqe64_sig_all(void)
{
	with_pair(&(struct sc_spec){ .cqe_size = 64, .sig_all = true }, replies_sig_all);
}

static void disabled(void)
{
	with_pair(&(struct sc_spec){ .cqe_size = 64, .sig_all = true,
				     .create_flags = MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE },
		  nothing_in_cqe);
}

static void env_off(void)
{
	/* mlx5 reads it at each create_qp. */
	setenv("MLX5_SCATTER_TO_CQE", "0", 1);
	with_pair(&(struct sc_spec){ .cqe_size = 64, .sig_all = true }, nothing_in_cqe);
	unsetenv("MLX5_SCATTER_TO_CQE");
}

static void packet_based_credit(void)
{
	with_pair(&(struct sc_spec){ .cqe_size = 64,
				     .create_flags = MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE },
		  packet_credits);
}

static void buffers(void)
{
	src = buf_new(&dev_a, BUF_LEN, BUF_LEN, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	dst = buf_new(&dev_b, BUF_LEN, BUF_LEN, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	remote = buf_new(&dev_b, BUF_LEN, BUF_LEN,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
			 0);
	check(src && dst && remote, "buffers registered");
}

static const struct named_check checks[] = {
	{ "buffers", buffers },
	{ "64-byte CQEs, mlx5's default", cqe64_default },
	{ "128-byte CQEs, ALLOW_SCATTER_TO_CQE", cqe128_allow },
	{ "64-byte CQEs, ALLOW_SCATTER_TO_CQE", cqe64_allow },
	{ "64-byte CQEs, every WQE signaled", cqe64_sig_all },
	{ "DISABLE_SCATTER_TO_CQE", disabled },
	{ "MLX5_SCATTER_TO_CQE=0", env_off },
	{ "PACKET_BASED_CREDIT_MODE", packet_based_credit },
	{ "buffers freed", bufs_free },
};

int main(int argc, char **argv)
{
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
