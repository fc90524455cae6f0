/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The send queue cap of the ring contract through the public verbs API.
 * The 16-bit counters of the doorbell record and the CQE tell at most
 * 2^15 basic blocks apart, so max_qp_wr is 32768 (a ConnectX-5's) and a
 * create whose max_send_wr WQEs would need more BBs than that fails with
 * EINVAL, as mlx5's calc_sq_size makes it. A QP at the cap runs a full
 * ring: every WQE completes, one more post finds the queue full (ENOMEM),
 * the data arrives, and the ring goes on past the wrap.
 *
 *   sq_cap DEVICE_A DEVICE_B   one line per check, then "N passed" and
 *                              "N failed"; exit 0 when none failed
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define SQ_MAX_BBS 32768	/* what max_qp_wr must say */
#define SGE_PER_WRITE 3		/* ctrl + raddr + 3 data segments: 80 bytes, 2 BBs */
#define SGE_BYTES 4
#define WRITE_BYTES (SGE_PER_WRITE * SGE_BYTES)
#define FULL_WRITES (SQ_MAX_BBS / 2)
#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

static void check_max_qp_wr(void)
{
	struct ibv_device_attr attr;
	int ret = ibv_query_device(dev_a.ctx, &attr);

	check(ret == 0 && attr.max_qp_wr == SQ_MAX_BBS, "max_qp_wr %d (want %d)",
	      ret ? -1 : attr.max_qp_wr, SQ_MAX_BBS);
}

static const struct create_case {
	const char *what;
	uint32_t max_send_wr, max_send_sge, max_inline_data;
	int err;		/* 0: created, granting max_send_wr */
} creates[] = {
	{ "1-BB WQEs, max_qp_wr of them", SQ_MAX_BBS, 1, 0, 0 },
	{ "2-BB WQEs, half of max_qp_wr", SQ_MAX_BBS / 2, 4, 0, 0 },
	{ "2-BB WQEs, one more than fit", SQ_MAX_BBS / 2 + 1, 4, 0, EINVAL },
	{ "2-BB WQEs, max_qp_wr of them", SQ_MAX_BBS, 4, 0, EINVAL },
	{ "2-BB inline WQEs, max_qp_wr of them", SQ_MAX_BBS, 1, 64, EINVAL },
	{ "9-BB WQEs that fit", 3640, 30, 512, 0 },
	{ "9-BB WQEs, one more than fit", 3641, 30, 512, EINVAL },
};

static void check_creates(void)
{
	struct ibv_cq *cq = ibv_create_cq(dev_a.ctx, 16, NULL, NULL, 0);
	size_t i;

	if (!cq) {
		check(false, "ibv_create_cq: %s", strerror(errno));
		return;
	}
	for (i = 0; i < sizeof(creates) / sizeof(creates[0]); i++) {
		const struct create_case *c = &creates[i];
		struct ibv_qp_init_attr attr = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = c->max_send_wr, .max_recv_wr = 1,
				 .max_send_sge = c->max_send_sge, .max_recv_sge = 1,
				 .max_inline_data = c->max_inline_data },
		};
		struct ibv_qp *qp;

		errno = 0;
		qp = ibv_create_qp(dev_a.pd, &attr);
		if (c->err)
			check(!qp && errno == c->err, "create %s (max_send_wr %u): %s", c->what,
			      c->max_send_wr, qp ? "created" : strerror(errno));
		else
			check(qp && attr.cap.max_send_wr == c->max_send_wr,
			      "create %s (max_send_wr %u): granted %u", c->what, c->max_send_wr,
			      qp ? attr.cap.max_send_wr : 0);
		if (qp)
			ibv_destroy_qp(qp);
	}
	ibv_destroy_cq(cq);
}

static const struct side_spec full_side = {
	.cap = { .max_send_wr = FULL_WRITES, .max_recv_wr = 16, .max_send_sge = 4,
		 .max_recv_sge = 4 },
	.send_cqe = CQ_DEPTH, .recv_cqe = CQ_DEPTH, .knobs = QP_KNOBS_DEFAULT,
};

/* WRITE number i: three pieces of src into dst at i * WRITE_BYTES; only the last signaled. */
static void write_wr(struct ibv_send_wr *wr, struct ibv_sge *sge, const struct buf *src,
		     const struct buf *dst, size_t i, bool last)
{
	for (size_t k = 0; k < SGE_PER_WRITE; k++)
		sge[k] = sge_of(src, i * WRITE_BYTES + k * SGE_BYTES, SGE_BYTES);
	*wr = (struct ibv_send_wr){
		.wr_id = i, .sg_list = sge, .num_sge = SGE_PER_WRITE, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = last ? IBV_SEND_SIGNALED : 0,
		.wr.rdma = { .remote_addr = raddr_of(dst, i * WRITE_BYTES), .rkey = dst->mr->rkey },
	};
}

/* 16384 WRITEs of 2 BBs fill the SQ's 32768 BBs exactly: all complete, then it goes on. */
static void check_full_ring(void)
{
	static struct ibv_send_wr wr[FULL_WRITES + 1];
	static struct ibv_sge sge[FULL_WRITES + 1][SGE_PER_WRITE];
	const size_t len = (FULL_WRITES + 1) * WRITE_BYTES;
	struct ibv_send_wr *bad = NULL;
	struct buf *src, *dst;
	struct pair p;
	size_t i;
	int ret;

	if (!pair_open(&p, &full_side, &full_side))
		goto out;
	check(p.a.cap.max_send_wr == FULL_WRITES, "QP at the cap: max_send_wr %u",
	      p.a.cap.max_send_wr);
	src = buf_new(&dev_a, len, len, IBV_ACCESS_LOCAL_WRITE, 0);
	dst = buf_new(&dev_b, len, len, RW, UNTOUCHED);
	if (!src || !dst)
		goto out;
	fill_pattern(src->p, len, 7, 0);
	for (i = 0; i < FULL_WRITES; i++) {
		write_wr(&wr[i], sge[i], src, dst, i, i + 1 == FULL_WRITES);
		wr[i].next = i + 1 < FULL_WRITES ? &wr[i + 1] : NULL;
	}
	if (!post_send(p.a.qp, wr, "a full send queue of WRITEs"))
		goto out;
	/* Nothing polled yet: the ring is full however far the daemon got. */
	write_wr(&wr[FULL_WRITES], sge[FULL_WRITES], src, dst, FULL_WRITES, true);
	ret = ibv_post_send(p.a.qp, &wr[FULL_WRITES], &bad);
	check(ret == ENOMEM && bad == &wr[FULL_WRITES], "one more WRITE on the full queue: %s",
	      ret ? strerror(ret) : "posted");
	if (!expect_wc(p.a.send_cq, "the last WRITE of the full queue",
		       (struct want){ FULL_WRITES - 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL))
		goto out;
	check_pattern(dst->p, FULL_WRITES * WRITE_BYTES, 7, 0, "every WRITE of the full queue");
	/* The ring wraps: BB 0 again, with the counters past 2^15. */
	if (ret == ENOMEM && post_send(p.a.qp, &wr[FULL_WRITES], "a WRITE after the wrap"))
		expect_wc(p.a.send_cq, "the WRITE after the wrap",
			  (struct want){ FULL_WRITES, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL);
	check_pattern(dst->p, len, 7, 0, "the WRITE after the wrap");
out:
	pair_close(&p);
	bufs_free();
}

#define RECV_SGE_WANT 30	/* a 512-byte receive stride: room for 32 segments */
#define RECV_SGE_BYTES 64

static const struct side_spec many_sge_side = {
	.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
		 .max_recv_sge = RECV_SGE_WANT },
	.send_cqe = CQ_DEPTH, .recv_cqe = CQ_DEPTH, .knobs = QP_KNOBS_DEFAULT,
};

/* Every receive SGE the create granted is scattered into. */
static void check_granted_recv_sge(void)
{
	struct ibv_sge sge[RECV_SGE_WANT + 2], send_sge;
	struct ibv_recv_wr rwr;
	struct ibv_send_wr swr;
	struct buf *src, *dst;
	struct pair p;
	size_t len;
	uint32_t n, i;

	if (!pair_open(&p, &many_sge_side, &many_sge_side))
		goto out;
	n = p.b.cap.max_recv_sge;
	check(n >= RECV_SGE_WANT && n <= RECV_SGE_WANT + 2, "max_recv_sge %u granted for %u",
	      n, RECV_SGE_WANT);
	if (n < RECV_SGE_WANT || n > RECV_SGE_WANT + 2)
		goto out;
	len = (size_t)n * RECV_SGE_BYTES;
	src = buf_new(&dev_a, len, len, IBV_ACCESS_LOCAL_WRITE, 0);
	dst = buf_new(&dev_b, len, len, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	if (!src || !dst)
		goto out;
	fill_pattern(src->p, len, 9, 0);
	for (i = 0; i < n; i++)
		sge[i] = sge_of(dst, (size_t)i * RECV_SGE_BYTES, RECV_SGE_BYTES);
	rwr = (struct ibv_recv_wr){ .wr_id = 0x51, .sg_list = sge, .num_sge = (int)n };
	send_sge = sge_of(src, 0, len);
	swr = (struct ibv_send_wr){ .wr_id = 0x52, .sg_list = &send_sge, .num_sge = 1,
				    .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	if (!post_recv(p.b.qp, &rwr, "a receive of max_recv_sge SGEs") ||
	    !post_send(p.a.qp, &swr, "a SEND filling them"))
		goto out;
	expect_wc(p.b.recv_cq, "the receive of max_recv_sge SGEs",
		  (struct want){ 0x51, IBV_WC_SUCCESS, IBV_WC_RECV, (long)len }, NULL);
	expect_wc(p.a.send_cq, "the SEND filling them",
		  (struct want){ 0x52, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
	check_pattern(dst->p, len, 9, 0, "every receive SGE");
out:
	pair_close(&p);
	bufs_free();
}

static const struct named_check checks[] = {
	{ "max_qp_wr", check_max_qp_wr },
	{ "creates at and above the send queue cap", check_creates },
	{ "a full send queue at the cap", check_full_ring },
	{ "a receive of as many SGEs as granted", check_granted_recv_sge },
};

int main(int argc, char **argv)
{
	/* 16384 WRITEs before the one completion: room for a slow (sanitized) build. */
	completion_wait_ms = 30000;
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
