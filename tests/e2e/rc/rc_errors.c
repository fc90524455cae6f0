/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RC data path through the public verbs API only: error completions
 * and flushes, the errno and *bad_wr of refused posts, gather and scatter
 * lists spread over several MRs, immediate data, unsignaled work requests,
 * and the same operations through the ibv_qp_ex work-request API.
 *
 * One process opens a context on each of two devices (or two contexts on
 * one device) and connects a fresh QP pair for every check, so an error
 * left by one check cannot leak into the next. The daemon still carries
 * every packet over UDP. QP "a" is always the requester, "b" the responder.
 * Devices, QP pairs and check lines are those of verbs_pair.c.
 *
 *   rc_errors DEVICE_A DEVICE_B   one line per check, then "N passed" and
 *                                 "N failed"; exit 0 when none failed
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define MAX_SGES 32		/* device max_sge is 30 */
#define SPARE 0xee		/* fill of receive space past the message */

/* A message of total bytes (seed) received into bufs in[0..n): right bytes, spare space kept. */
static void check_scattered(struct buf **in, int n, size_t total, unsigned int seed, const char *what)
{
	size_t offset = 0, spare = 0, bad = SIZE_MAX;

	for (int i = 0; i < n; i++) {
		size_t take = in[i]->len < total - offset ? in[i]->len : total - offset;
		size_t at = pattern_mismatch(in[i]->p, take, seed, offset);

		if (at != take && bad == SIZE_MAX)
			bad = offset + at;
		if (!all_bytes(in[i]->p + take, in[i]->len - take, SPARE))
			spare++;
		offset += take;
	}
	check(bad == SIZE_MAX && spare == 0 && offset == total,
	      "%s: %zu bytes scattered over %d MRs right%s", what, total, n,
	      bad != SIZE_MAX ? " (wrong byte in the message)" :
	      spare ? " (written past the message)" : "");
}

static void expect_imm(const struct ibv_wc *wc, uint32_t imm_host, const char *what)
{
	check((wc->wc_flags & IBV_WC_WITH_IMM) && wc->imm_data == htobe32(imm_host),
	      "%s: immediate data 0x%08x (got flags 0x%x imm 0x%08x)", what, imm_host,
	      wc->wc_flags, be32toh(wc->imm_data));
}

/* A single signaled RDMA WRITE of len bytes from local to remote works (the QP is usable). */
static void expect_write_works(struct pair *p, struct buf *local, struct buf *remote,
			       size_t offset, size_t len, const char *what)
{
	struct ibv_sge sge = sge_of(local, offset, len);
	struct ibv_send_wr wr = {
		.wr_id = 0x77, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr_of(remote, offset), .rkey = remote->mr->rkey },
	};

	if (post_send(p->a.qp, &wr, what) &&
	    expect_wc(p->a.send_cq, what, (struct want){ 0x77, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL))
		check_pattern(remote->p + offset, len, 1, offset, what);
}

/* ---- the checks ---- */

static const size_t gather_len[3] = { 100, 1000, 3000 };	/* 4100 bytes: 5 packets */
static const size_t scatter_len[3] = { 2000, 50, 2066 };	/* 4116 bytes: 16 to spare */
#define GATHER_TOTAL 4100

/* Three MRs on A holding message seed, their SGEs in sge[]. */
static bool gather_bufs(struct ibv_sge *sge, unsigned int seed)
{
	size_t offset = 0;

	for (int i = 0; i < 3; i++) {
		struct buf *b = buf_new(&dev_a, gather_len[i], gather_len[i], IBV_ACCESS_LOCAL_WRITE, 0);

		if (!b)
			return false;
		fill_pattern(b->p, b->len, seed, offset);
		sge[i] = sge_of(b, 0, b->len);
		offset += b->len;
	}
	return true;
}

/* Three MRs of dev set to SPARE, in out[], their SGEs in sge[]. */
static bool scatter_bufs(struct dev *d, struct buf **out, struct ibv_sge *sge)
{
	for (int i = 0; i < 3; i++) {
		out[i] = buf_new(d, scatter_len[i], scatter_len[i], IBV_ACCESS_LOCAL_WRITE, SPARE);
		if (!out[i])
			return false;
		sge[i] = sge_of(out[i], 0, out[i]->len);
	}
	return true;
}

static void check_send_over_mrs(void)
{
	const char *what = "SEND gathered from 3 MRs into 3 MRs";
	struct ibv_sge out_sge[3], in_sge[3];
	struct buf *in[3];
	struct pair p;
	struct ibv_recv_wr rwr = { .wr_id = 0xb1, .sg_list = in_sge, .num_sge = 3 };
	struct ibv_send_wr swr = {
		.wr_id = 0xa1, .sg_list = out_sge, .num_sge = 3, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};

	/*
	 * The receive MRs first: run against a fresh daemon, one of them gets
	 * the first key it hands out, which must not be taken for mlx5's
	 * end-of-list key MLX5_INVALID_LKEY (0x100) in a receive WQE.
	 */
	if (!pair_open(&p, &side_default, &side_default) || !scatter_bufs(&dev_b, in, in_sge) ||
	    !gather_bufs(out_sge, 2) || !post_recv(p.b.qp, &rwr, what) ||
	    !post_send(p.a.qp, &swr, what))
		goto out;
	if (expect_wc(p.b.recv_cq, "SEND over MRs: receive",
		      (struct want){ 0xb1, IBV_WC_SUCCESS, IBV_WC_RECV, GATHER_TOTAL }, NULL))
		check_scattered(in, 3, GATHER_TOTAL, 2, what);
	expect_wc(p.a.send_cq, "SEND over MRs: send", (struct want){ 0xa1, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
out:
	pair_close(&p);
	bufs_free();
}

static void check_write_over_mrs(void)
{
	const char *what = "RDMA WRITE gathered from 3 MRs";
	struct ibv_sge sge[3];
	struct buf *remote;
	struct pair p;
	struct ibv_send_wr wr = {
		.wr_id = 0xa2, .sg_list = sge, .num_sge = 3, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	};

	if (!pair_open(&p, &side_default, &side_default) || !gather_bufs(sge, 3))
		goto out;
	remote = buf_new(&dev_b, 8192, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, UNTOUCHED);
	if (!remote)
		goto out;
	wr.wr.rdma.remote_addr = raddr_of(remote, 32);
	wr.wr.rdma.rkey = remote->mr->rkey;
	if (!post_send(p.a.qp, &wr, what))
		goto out;
	if (expect_wc(p.a.send_cq, what, (struct want){ 0xa2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL)) {
		check_pattern(remote->p + 32, GATHER_TOTAL, 3, 0, what);
		check_untouched(remote->p, 32, UNTOUCHED, "RDMA WRITE over MRs: before the target");
		check_untouched(remote->p + 32 + GATHER_TOTAL, 8192 - 32 - GATHER_TOTAL, UNTOUCHED,
				"RDMA WRITE over MRs: after the target");
	}
out:
	pair_close(&p);
	bufs_free();
}

static void check_read_over_mrs(void)
{
	const char *what = "RDMA READ scattered into 3 MRs";
	struct ibv_sge sge[3];
	struct buf *in[3], *remote;
	struct pair p;
	struct ibv_send_wr wr = {
		.wr_id = 0xa3, .sg_list = sge, .num_sge = 3, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
	};

	if (!pair_open(&p, &side_default, &side_default) || !scatter_bufs(&dev_a, in, sge))
		goto out;
	remote = buf_new(&dev_b, 8192, 8192, IBV_ACCESS_REMOTE_READ, 0);
	if (!remote)
		goto out;
	fill_pattern(remote->p, remote->len, 4, 0);
	/* Read 4100 bytes from offset 0 into 4116 bytes of space: the last 16 stay spare. */
	wr.wr.rdma.remote_addr = raddr_of(remote, 0);
	wr.wr.rdma.rkey = remote->mr->rkey;
	sge[2].length -= 16;
	if (!post_send(p.a.qp, &wr, what))
		goto out;
	if (expect_wc(p.a.send_cq, what, (struct want){ 0xa3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, -1 }, NULL))
		check_scattered(in, 3, GATHER_TOTAL, 4, what);
out:
	pair_close(&p);
	bufs_free();
}

static void check_immediate(void)
{
	const char *what = "SEND and RDMA WRITE with immediate";
	struct buf *src, *in, *target;
	struct ibv_sge src_sge[2], in_sge;
	struct ibv_recv_wr rwr[2] = {
		{ .wr_id = 0xb1, .sg_list = &in_sge, .num_sge = 1, .next = &rwr[1] },
		{ .wr_id = 0xb2, .num_sge = 0 },	/* WRITE with immediate needs no buffer */
	};
	struct ibv_send_wr swr[2] = {
		{ .wr_id = 0xa1, .sg_list = &src_sge[0], .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
		  .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(0x01020304), .next = &swr[1] },
		{ .wr_id = 0xa2, .sg_list = &src_sge[1], .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		  .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(0x0a0b0c0d) },
	};
	struct ibv_wc wc;
	struct pair p;

	if (!pair_open(&p, &side_default, &side_default))
		goto out;
	src = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	in = buf_new(&dev_b, 256, 256, IBV_ACCESS_LOCAL_WRITE, SPARE);
	target = buf_new(&dev_b, 4096, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, UNTOUCHED);
	if (!src || !in || !target)
		goto out;
	fill_pattern(src->p, src->len, 5, 0);
	src_sge[0] = sge_of(src, 0, 200);
	src_sge[1] = sge_of(src, 1024, 1500);
	in_sge = sge_of(in, 0, in->len);
	swr[1].wr.rdma.remote_addr = raddr_of(target, 1024);
	swr[1].wr.rdma.rkey = target->mr->rkey;
	if (!post_recv(p.b.qp, rwr, what) || !post_send(p.a.qp, swr, what))
		goto out;
	if (expect_wc(p.b.recv_cq, "SEND with immediate: receive",
		      (struct want){ 0xb1, IBV_WC_SUCCESS, IBV_WC_RECV, 200 }, &wc)) {
		expect_imm(&wc, 0x01020304, "SEND with immediate");
		check_pattern(in->p, 200, 5, 0, "SEND with immediate: data");
		check_untouched(in->p + 200, 56, SPARE, "SEND with immediate: space past the message");
	}
	if (expect_wc(p.b.recv_cq, "RDMA WRITE with immediate: receive consumed",
		      (struct want){ 0xb2, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, 1500 }, &wc)) {
		expect_imm(&wc, 0x0a0b0c0d, "RDMA WRITE with immediate");
		check_pattern(target->p + 1024, 1500, 5, 1024, "RDMA WRITE with immediate: data");
	}
	expect_wc(p.a.send_cq, "SEND with immediate: send", (struct want){ 0xa1, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
	expect_wc(p.a.send_cq, "RDMA WRITE with immediate: send",
		  (struct want){ 0xa2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL);
out:
	pair_close(&p);
	bufs_free();
}

/*
 * An RQ of one SGE per receive (16-byte WQEs, no terminator), as
 * ibv_rc_pingpong and perftest make it: three rounds fill it and empty it,
 * so its ring wraps.
 */
static void check_rq_one_sge(void)
{
	struct side_spec responder = side_default;
	struct ibv_recv_wr rwr[16];
	struct ibv_send_wr swr[16];
	struct ibv_sge rsge[16], ssge[16];
	struct buf *src, *in;
	char what[80];
	struct pair p;
	uint32_t n;

	responder.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
					     .max_recv_sge = 1 };
	if (!pair_open(&p, &side_default, &responder))
		goto out;
	n = p.b.cap.max_recv_wr;
	src = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	in = buf_new(&dev_b, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, SPARE);
	if (!src || !in)
		goto out;
	if (n < 1 || n > 16) {
		check(false, "1-SGE RQ: granted max_recv_wr %u is outside 1..16", n);
		goto out;
	}
	fill_pattern(src->p, src->len, 12, 0);
	for (int round = 0; round < 3; round++) {
		for (uint32_t i = 0; i < n; i++) {
			size_t offset = (round * n + i) * 64;

			rsge[i] = sge_of(in, offset, 64);
			rwr[i] = (struct ibv_recv_wr){ .wr_id = round * 100 + i, .sg_list = &rsge[i],
						       .num_sge = 1, .next = i + 1 < n ? &rwr[i + 1] : NULL };
			ssge[i] = sge_of(src, offset, 64);
			swr[i] = (struct ibv_send_wr){ .wr_id = round * 100 + i, .sg_list = &ssge[i],
						       .num_sge = 1, .opcode = IBV_WR_SEND,
						       .send_flags = IBV_SEND_SIGNALED,
						       .next = i + 1 < n ? &swr[i + 1] : NULL };
		}
		snprintf(what, sizeof(what), "1-SGE RQ of %u: round %d", n, round + 1);
		if (!post_recv(p.b.qp, rwr, what) || !post_send(p.a.qp, swr, what))
			goto out;
		for (uint32_t i = 0; i < n; i++)
			if (!expect_wc(p.b.recv_cq, what,
				       (struct want){ round * 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV, 64 }, NULL) ||
			    !expect_wc(p.a.send_cq, what,
				       (struct want){ round * 100 + i, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL))
				goto out;
	}
	check_pattern(in->p, 3 * n * 64, 12, 0, "1-SGE RQ: data of every receive");
out:
	pair_close(&p);
	bufs_free();
}

/*
 * Rounds of (SQ size - 1) unsignaled WRITEs and one signaled: only the
 * signaled one completes, and its completion frees the slots of the others.
 */
static void check_unsignaled(void)
{
	struct side_spec requester = side_default;
	struct ibv_send_wr wr[CQ_DEPTH];
	struct ibv_sge sge[CQ_DEPTH];
	struct buf *local, *remote;
	struct ibv_wc wc;
	struct pair p;
	uint32_t n;
	int round;

	requester.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
					     .max_recv_sge = 1 };
	if (!pair_open(&p, &requester, &side_default))
		goto out;
	n = p.a.cap.max_send_wr;
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	remote = buf_new(&dev_b, 4096, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, UNTOUCHED);
	if (!local || !remote)
		goto out;
	if (n < 2 || n > CQ_DEPTH) {
		check(false, "unsignaled: granted max_send_wr %u is outside 2..%d", n, CQ_DEPTH);
		goto out;
	}
	fill_pattern(local->p, local->len, 1, 0);
	for (round = 0; round < 4; round++) {
		char what[64];

		for (uint32_t i = 0; i < n; i++) {
			size_t offset = (round * n + i) * 8;

			sge[i] = sge_of(local, offset, 8);
			wr[i] = (struct ibv_send_wr){
				.wr_id = round * 100 + i, .sg_list = &sge[i], .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE, .next = i + 1 < n ? &wr[i + 1] : NULL,
				.send_flags = i + 1 < n ? 0 : IBV_SEND_SIGNALED,
				.wr.rdma = { .remote_addr = raddr_of(remote, offset), .rkey = remote->mr->rkey },
			};
		}
		snprintf(what, sizeof(what), "unsignaled: round %d of %u WRs in a %u-WR SQ", round + 1, n, n);
		if (!post_send(p.a.qp, wr, what) ||
		    !expect_wc(p.a.send_cq, what,
			       (struct want){ round * 100 + n - 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL))
			goto out;
	}
	check(ibv_poll_cq(p.a.send_cq, 1, &wc) == 0, "unsignaled: no completion for unsignaled WRs");
	check_pattern(remote->p, 4 * n * 8, 1, 0, "unsignaled: data of every WR");
out:
	pair_close(&p);
	bufs_free();
}

/*
 * A SEND bigger than the posted receive: the responder completes it with
 * a local length error, the requester with a remote invalid request error;
 * both QPs go to ERR and flush the rest of their work requests.
 */
static void check_receive_too_small(void)
{
	const char *what = "receive buffer too small";
	struct buf *src, *a_in, *b_in;
	struct ibv_sge a_sge[2], b_sge[3], src_sge[3];
	struct ibv_recv_wr a_rwr[2], b_rwr[3];
	struct ibv_send_wr swr[3];
	struct pair p;

	if (!pair_open(&p, &side_default, &side_default))
		goto out;
	src = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	a_in = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, SPARE);
	b_in = buf_new(&dev_b, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, SPARE);
	if (!src || !a_in || !b_in)
		goto out;
	fill_pattern(src->p, src->len, 6, 0);
	for (int i = 0; i < 2; i++) {
		a_sge[i] = sge_of(a_in, i * 1024, 1024);
		a_rwr[i] = (struct ibv_recv_wr){ .wr_id = 0xa81 + i, .sg_list = &a_sge[i], .num_sge = 1,
						 .next = i < 1 ? &a_rwr[i + 1] : NULL };
	}
	for (int i = 0; i < 3; i++) {
		b_sge[i] = sge_of(b_in, i * 1024, i == 0 ? 16 : 1024);
		b_rwr[i] = (struct ibv_recv_wr){ .wr_id = 0xb1 + i, .sg_list = &b_sge[i], .num_sge = 1,
						 .next = i < 2 ? &b_rwr[i + 1] : NULL };
		src_sge[i] = sge_of(src, i * 1024, i == 0 ? 64 : 8);
		swr[i] = (struct ibv_send_wr){ .wr_id = 0xa1 + i, .sg_list = &src_sge[i], .num_sge = 1,
					       .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
					       .next = i < 2 ? &swr[i + 1] : NULL };
	}
	if (!post_recv(p.a.qp, a_rwr, what) || !post_recv(p.b.qp, b_rwr, what) ||
	    !post_send(p.a.qp, swr, what))
		goto out;
	expect_wc(p.b.recv_cq, "receive too small: responder",
		  (struct want){ 0xb1, IBV_WC_LOC_LEN_ERR, -1, -1 }, NULL);
	expect_wc(p.a.send_cq, "receive too small: requester",
		  (struct want){ 0xa1, IBV_WC_REM_INV_REQ_ERR, -1, -1 }, NULL);
	expect_wc(p.a.send_cq, "receive too small: requester's 2nd send flushed",
		  (struct want){ 0xa2, IBV_WC_WR_FLUSH_ERR, -1, -1 }, NULL);
	expect_wc(p.a.send_cq, "receive too small: requester's 3rd send flushed",
		  (struct want){ 0xa3, IBV_WC_WR_FLUSH_ERR, -1, -1 }, NULL);
	expect_wc(p.b.recv_cq, "receive too small: responder's 2nd receive flushed",
		  (struct want){ 0xb2, IBV_WC_WR_FLUSH_ERR, -1, -1 }, NULL);
	expect_wc(p.b.recv_cq, "receive too small: responder's 3rd receive flushed",
		  (struct want){ 0xb3, IBV_WC_WR_FLUSH_ERR, -1, -1 }, NULL);
	expect_wc(p.a.recv_cq, "receive too small: requester's 1st receive flushed",
		  (struct want){ 0xa81, IBV_WC_WR_FLUSH_ERR, -1, -1 }, NULL);
	expect_wc(p.a.recv_cq, "receive too small: requester's 2nd receive flushed",
		  (struct want){ 0xa82, IBV_WC_WR_FLUSH_ERR, -1, -1 }, NULL);
	expect_state(p.a.qp, IBV_QPS_ERR, "receive too small: requester");
	expect_state(p.b.qp, IBV_QPS_ERR, "receive too small: responder");
	/* The daemon sleeps by now: a receive doorbell in ERR must still wake it to flush. */
	usleep(50000);
	b_rwr[0] = (struct ibv_recv_wr){ .wr_id = 0xb9, .sg_list = &b_sge[1], .num_sge = 1 };
	if (!post_recv(p.b.qp, b_rwr, what))
		goto out;
	expect_wc(p.b.recv_cq, "receive posted in ERR to a sleeping daemon: flushed",
		  (struct want){ 0xb9, IBV_WC_WR_FLUSH_ERR, -1, -1 }, NULL);
	check_untouched(b_in->p + 16, 4096 - 16, SPARE, "receive too small: responder memory past the buffer");
out:
	pair_close(&p);
	bufs_free();
}

/*
 * A WRITE or READ the responder must refuse, followed by a good one: the
 * first completes with a remote access error, the second is flushed, the
 * QP is in ERR, and no byte moved. The remote MR covers the first 4096
 * bytes of an 8192-byte buffer, so a transfer past its end would show.
 */
static void remote_access_error(const char *what, enum ibv_wr_opcode op, int remote_access,
				size_t remote_offset, uint32_t rkey_xor)
{
	struct buf *local, *remote;
	struct ibv_sge sge[2];
	struct ibv_send_wr wr[2];
	char name[128];
	struct pair p;

	if (!pair_open(&p, &side_default, &side_default))
		goto out;
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	remote = buf_new(&dev_b, 8192, 4096, remote_access, UNTOUCHED);
	if (!local || !remote)
		goto out;
	fill_pattern(local->p, local->len, 7, 0);
	sge[0] = sge_of(local, 0, 64);
	sge[1] = sge_of(local, 1024, 8);
	wr[0] = (struct ibv_send_wr){
		.wr_id = 1, .sg_list = &sge[0], .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED, .next = &wr[1],
		.wr.rdma = { .remote_addr = raddr_of(remote, remote_offset),
			     .rkey = remote->mr->rkey ^ rkey_xor },
	};
	wr[1] = (struct ibv_send_wr){
		.wr_id = 2, .sg_list = &sge[1], .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr_of(remote, 0), .rkey = remote->mr->rkey },
	};
	if (!post_send(p.a.qp, wr, what))
		goto out;
	expect_wc(p.a.send_cq, what, (struct want){ 1, IBV_WC_REM_ACCESS_ERR, -1, -1 }, NULL);
	snprintf(name, sizeof(name), "%s: the next WR flushed", what);
	expect_wc(p.a.send_cq, name, (struct want){ 2, IBV_WC_WR_FLUSH_ERR, -1, -1 }, NULL);
	expect_state(p.a.qp, IBV_QPS_ERR, what);
	snprintf(name, sizeof(name), "%s: remote memory", what);
	check_untouched(remote->p, remote->len, UNTOUCHED, name);
	snprintf(name, sizeof(name), "%s: local memory", what);
	check(pattern_mismatch(local->p, local->len, 7, 0) == local->len, "%s: untouched", name);
out:
	pair_close(&p);
	bufs_free();
}

static void check_remote_access_errors(void)
{
	const int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

	remote_access_error("WRITE with a bad rkey (key byte)", IBV_WR_RDMA_WRITE, all, 0, 0xff);
	remote_access_error("WRITE with a bad rkey (no such MR)", IBV_WR_RDMA_WRITE, all, 0, 0x80000000u);
	remote_access_error("READ with a bad rkey", IBV_WR_RDMA_READ, all, 0, 0xff);
	remote_access_error("WRITE past the MR's end", IBV_WR_RDMA_WRITE, all, 4096 - 32, 0);
	remote_access_error("READ past the MR's end", IBV_WR_RDMA_READ, all, 4096 - 32, 0);
	remote_access_error("WRITE to an MR without REMOTE_WRITE", IBV_WR_RDMA_WRITE,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, 0, 0);
	remote_access_error("READ from an MR without REMOTE_READ", IBV_WR_RDMA_READ,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0, 0);
}

/* Three WRITEs, the 3rd with one SGE too many: ENOMEM at the 3rd (mlx5's post_send), the first two done. */
static void check_bad_wr_too_many_sges(void)
{
	struct side_spec requester = side_default;
	struct ibv_sge sge[2 + MAX_SGES];
	struct ibv_send_wr wr[3], *bad = NULL;
	struct buf *local, *remote;
	uint32_t nsge;
	struct pair p;
	int ret;

	requester.cap = (struct ibv_qp_cap){ .max_send_wr = 16, .max_recv_wr = 4, .max_send_sge = 2,
					     .max_recv_sge = 1 };
	if (!pair_open(&p, &requester, &side_default))
		goto out;
	nsge = p.a.cap.max_send_sge;
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	remote = buf_new(&dev_b, 4096, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, UNTOUCHED);
	if (!local || !remote)
		goto out;
	if (nsge < 2 || nsge >= MAX_SGES) {
		check(false, "too many SGEs: granted max_send_sge %u is outside 2..%d", nsge, MAX_SGES - 1);
		goto out;
	}
	fill_pattern(local->p, local->len, 1, 0);
	for (int i = 0; i < 3; i++)
		wr[i] = (struct ibv_send_wr){
			.wr_id = 1 + i, .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.next = i < 2 ? &wr[i + 1] : NULL,
			.wr.rdma = { .remote_addr = raddr_of(remote, 64 * i), .rkey = remote->mr->rkey },
		};
	sge[0] = sge_of(local, 0, 64);
	sge[1] = sge_of(local, 64, 64);
	for (uint32_t i = 0; i <= nsge; i++)
		sge[2 + i] = sge_of(local, 128 + 8 * i, 8);
	wr[0].sg_list = &sge[0];
	wr[0].num_sge = 1;
	wr[1].sg_list = &sge[1];
	wr[1].num_sge = 1;
	wr[2].sg_list = &sge[2];
	wr[2].num_sge = nsge + 1;
	ret = ibv_post_send(p.a.qp, wr, &bad);
	check(ret == ENOMEM && bad == &wr[2],
	      "3rd WR with %u SGEs (max %u): ENOMEM with *bad_wr the 3rd WR (got %d, WR #%td)",
	      nsge + 1, nsge, ret, bad ? bad - wr + 1 : 0);
	if (ret == 0)
		goto out;
	expect_wc(p.a.send_cq, "too many SGEs: 1st WR done", (struct want){ 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL);
	if (!expect_wc(p.a.send_cq, "too many SGEs: 2nd WR done",
		       (struct want){ 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL))
		goto out;
	check_pattern(remote->p, 128, 1, 0, "too many SGEs: data of the first two WRs");
	check_untouched(remote->p + 128, 4096 - 128, UNTOUCHED, "too many SGEs: nothing of the 3rd WR");
	expect_state(p.a.qp, IBV_QPS_RTS, "too many SGEs: a refused post leaves the QP");
	wr[2].num_sge = nsge;
	if (post_send(p.a.qp, &wr[2], "max_send_sge SGEs") &&
	    expect_wc(p.a.send_cq, "max_send_sge SGEs", (struct want){ 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL))
		check_pattern(remote->p + 128, 8 * nsge, 1, 128, "max_send_sge SGEs: data");
out:
	pair_close(&p);
	bufs_free();
}

/* max_send_wr + 2 WRs in one list: ENOMEM at the first that does not fit, the rest done. */
static void check_sq_full(void)
{
	struct side_spec requester = side_default;
	struct ibv_send_wr wr[CQ_DEPTH], *bad = NULL;
	struct ibv_sge sge[CQ_DEPTH];
	struct buf *local, *remote;
	struct pair p;
	uint32_t n;
	int ret;

	requester.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
					     .max_recv_sge = 1 };
	if (!pair_open(&p, &requester, &side_default))
		goto out;
	n = p.a.cap.max_send_wr;
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	remote = buf_new(&dev_b, 4096, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, UNTOUCHED);
	if (!local || !remote)
		goto out;
	if (n < 1 || n + 2 > CQ_DEPTH) {
		check(false, "full SQ: granted max_send_wr %u is outside 1..%d", n, CQ_DEPTH - 2);
		goto out;
	}
	fill_pattern(local->p, local->len, 1, 0);
	for (uint32_t i = 0; i < n + 2; i++) {
		sge[i] = sge_of(local, 8 * i, 8);
		wr[i] = (struct ibv_send_wr){
			.wr_id = 100 + i, .sg_list = &sge[i], .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED, .next = i + 1 < n + 2 ? &wr[i + 1] : NULL,
			.wr.rdma = { .remote_addr = raddr_of(remote, 8 * i), .rkey = remote->mr->rkey },
		};
	}
	ret = ibv_post_send(p.a.qp, wr, &bad);
	check(ret == ENOMEM && bad == &wr[n],
	      "%u WRs into a %u-WR SQ: ENOMEM with *bad_wr WR #%u (got %d, WR #%td)",
	      n + 2, n, n + 1, ret, bad ? bad - wr + 1 : 0);
	if (ret == 0 || !bad || bad < wr || bad > &wr[n + 1])
		goto out;
	for (uint32_t i = 0; i < (uint32_t)(bad - wr); i++)
		if (!expect_wc(p.a.send_cq, "full SQ: the WRs that fit are done",
			       (struct want){ 100 + i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL))
			goto out;
	check_pattern(remote->p, 8 * n, 1, 0, "full SQ: data of the WRs that fit");
	check_untouched(remote->p + 8 * n, 4096 - 8 * n, UNTOUCHED, "full SQ: nothing of the others");
	expect_write_works(&p, local, remote, 8 * n, 8, "full SQ: room again once completions are polled");
out:
	pair_close(&p);
	bufs_free();
}

static void check_bad_opcode(void)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct buf *local, *remote;
	struct ibv_sge sge;
	struct pair p;
	int ret;

	if (!pair_open(&p, &side_default, &side_default))
		goto out;
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	remote = buf_new(&dev_b, 4096, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, UNTOUCHED);
	if (!local || !remote)
		goto out;
	fill_pattern(local->p, local->len, 1, 0);
	sge = sge_of(local, 0, 64);
	wr = (struct ibv_send_wr){
		.wr_id = 9, .sg_list = &sge, .num_sge = 1, .opcode = (enum ibv_wr_opcode)0x7f,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr_of(remote, 0), .rkey = remote->mr->rkey },
	};
	ret = ibv_post_send(p.a.qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr, "opcode 0x7f: EINVAL with *bad_wr the WR (got %d%s)", ret,
	      bad == &wr ? "" : ", other bad_wr");
	expect_write_works(&p, local, remote, 0, 64, "bad opcode: the QP still works");
out:
	pair_close(&p);
	bufs_free();
}

/* Inline data: one byte over max_inline_data is ENOMEM (libmlx5's set_data_inl_seg); exactly that much is copied at post time. */
static void check_inline(void)
{
	struct side_spec requester = side_default;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_recv_wr rwr;
	struct ibv_sge sge, in_sge;
	uint8_t *src = NULL;
	struct buf *in;
	struct pair p;
	uint32_t max;
	int ret;

	requester.cap.max_inline_data = 64;
	if (!pair_open(&p, &requester, &side_default))
		goto out;
	max = p.a.cap.max_inline_data;
	in = buf_new(&dev_b, 1024, 1024, IBV_ACCESS_LOCAL_WRITE, SPARE);
	src = malloc(max + 1);	/* inline data needs no MR */
	if (!in || !src)
		goto out;
	if (max < 64 || max > 512) {
		check(false, "inline: granted max_inline_data %u is outside 64..512", max);
		goto out;
	}
	fill_pattern(src, max + 1, 8, 0);
	sge = (struct ibv_sge){ .addr = (uintptr_t)src, .length = max + 1 };
	wr = (struct ibv_send_wr){
		.wr_id = 0xa1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
	};
	ret = ibv_post_send(p.a.qp, &wr, &bad);
	check(ret == ENOMEM && bad == &wr, "inline SEND of %u bytes (max %u): ENOMEM with *bad_wr the WR (got %d)",
	      max + 1, max, ret);
	if (ret == 0)
		goto out;
	in_sge = sge_of(in, 0, in->len);
	rwr = (struct ibv_recv_wr){ .wr_id = 0xb1, .sg_list = &in_sge, .num_sge = 1 };
	sge.length = max;
	wr.wr_id = 0xa2;
	if (!post_recv(p.b.qp, &rwr, "inline") || !post_send(p.a.qp, &wr, "inline SEND of max_inline_data"))
		goto out;
	memset(src, 0, max + 1);	/* the bytes were copied by ibv_post_send */
	if (expect_wc(p.b.recv_cq, "inline SEND of max_inline_data: receive",
		      (struct want){ 0xb1, IBV_WC_SUCCESS, IBV_WC_RECV, max }, NULL))
		check_pattern(in->p, max, 8, 0, "inline SEND: data as it was at post time");
	expect_wc(p.a.send_cq, "inline SEND of max_inline_data: send",
		  (struct want){ 0xa2, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
out:
	free(src);
	pair_close(&p);
	bufs_free();
}

/* SEND, WRITE, READ (SGE lists over several MRs and inline data) through the ibv_qp_ex API. */
static void check_qp_ex(void)
{
	static const struct want sends[] = {
		{ 1, IBV_WC_SUCCESS, IBV_WC_SEND, -1 },
		{ 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 },
		{ 3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, -1 },
		{ 4, IBV_WC_SUCCESS, IBV_WC_SEND, -1 },
		{ 5, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 },
		{ 6, IBV_WC_SUCCESS, IBV_WC_SEND, -1 },
	};
	struct side_spec requester = side_default;
	struct ibv_sge gather[3], read_sge[3], in_sge[3];
	struct buf *in[3], *read_in[3], *target, *source;
	struct ibv_recv_wr rwr[3];
	uint8_t inline_src[60];
	struct ibv_qp_ex *qpx;
	struct ibv_wc wc;
	struct pair p;
	int ret;

	requester.cap.max_inline_data = 64;
	requester.qp_ex = true;
	if (!pair_open(&p, &requester, &side_default) || !gather_bufs(gather, 9) ||
	    !scatter_bufs(&dev_a, read_in, read_sge))
		goto out;
	qpx = ibv_qp_to_qp_ex(p.a.qp);
	for (int i = 0; i < 3; i++) {
		in[i] = buf_new(&dev_b, 8192, 8192, IBV_ACCESS_LOCAL_WRITE, SPARE);
		if (!in[i])
			goto out;
		in_sge[i] = sge_of(in[i], 0, in[i]->len);
		rwr[i] = (struct ibv_recv_wr){ .wr_id = 0xb1 + i, .sg_list = &in_sge[i], .num_sge = 1,
					       .next = i < 2 ? &rwr[i + 1] : NULL };
	}
	target = buf_new(&dev_b, 8192, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, UNTOUCHED);
	source = buf_new(&dev_b, 8192, 8192, IBV_ACCESS_REMOTE_READ, 0);
	if (!qpx || !target || !source) {
		check(false, "ibv_qp_ex: ibv_qp_to_qp_ex or buffers");
		goto out;
	}
	fill_pattern(source->p, source->len, 10, 0);
	fill_pattern(inline_src, sizeof(inline_src), 11, 0);
	read_sge[2].length -= 16;
	if (!post_recv(p.b.qp, rwr, "ibv_qp_ex"))
		goto out;

	ibv_wr_start(qpx);
	qpx->wr_flags = IBV_SEND_SIGNALED;
	qpx->wr_id = 1;
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, 3, gather);
	qpx->wr_id = 2;
	ibv_wr_rdma_write(qpx, target->mr->rkey, raddr_of(target, 64));
	ibv_wr_set_sge_list(qpx, 3, gather);
	qpx->wr_id = 3;
	ibv_wr_rdma_read(qpx, source->mr->rkey, raddr_of(source, 0));
	ibv_wr_set_sge_list(qpx, 3, read_sge);
	qpx->wr_id = 4;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, inline_src, sizeof(inline_src));
	qpx->wr_id = 5;
	ibv_wr_rdma_write(qpx, target->mr->rkey, raddr_of(target, 6000));
	ibv_wr_set_inline_data(qpx, inline_src, sizeof(inline_src));
	qpx->wr_id = 6;
	ibv_wr_send_imm(qpx, htobe32(0x00c0ffee));
	ibv_wr_set_sge(qpx, gather[0].lkey, gather[0].addr, gather[0].length);
	ret = ibv_wr_complete(qpx);
	check(ret == 0, "ibv_qp_ex: ibv_wr_complete of 6 WRs returned %d", ret);
	if (ret)
		goto out;
	memset(inline_src, 0, sizeof(inline_src));	/* inline bytes were copied already */

	for (size_t i = 0; i < sizeof(sends) / sizeof(sends[0]); i++)
		if (!expect_wc(p.a.send_cq, "ibv_qp_ex: requester", sends[i], NULL))
			break;
	if (expect_wc(p.b.recv_cq, "ibv_qp_ex: ibv_wr_send with an SGE list",
		      (struct want){ 0xb1, IBV_WC_SUCCESS, IBV_WC_RECV, GATHER_TOTAL }, NULL))
		check_pattern(in[0]->p, GATHER_TOTAL, 9, 0, "ibv_qp_ex: SEND data");
	if (expect_wc(p.b.recv_cq, "ibv_qp_ex: ibv_wr_send with inline data",
		      (struct want){ 0xb2, IBV_WC_SUCCESS, IBV_WC_RECV, sizeof(inline_src) }, NULL))
		check_pattern(in[1]->p, sizeof(inline_src), 11, 0, "ibv_qp_ex: inline SEND data");
	if (expect_wc(p.b.recv_cq, "ibv_qp_ex: ibv_wr_send_imm",
		      (struct want){ 0xb3, IBV_WC_SUCCESS, IBV_WC_RECV, gather[0].length }, &wc)) {
		expect_imm(&wc, 0x00c0ffee, "ibv_qp_ex: ibv_wr_send_imm");
		check_pattern(in[2]->p, gather[0].length, 9, 0, "ibv_qp_ex: SEND with immediate data");
	}
	check_pattern(target->p + 64, GATHER_TOTAL, 9, 0, "ibv_qp_ex: RDMA WRITE data");
	check_pattern(target->p + 6000, sizeof(inline_src), 11, 0, "ibv_qp_ex: inline RDMA WRITE data");
	check_untouched(target->p, 64, UNTOUCHED, "ibv_qp_ex: before the WRITE target");
	check_scattered(read_in, 3, GATHER_TOTAL, 10, "ibv_qp_ex: RDMA READ");
out:
	pair_close(&p);
	bufs_free();
}

/*
 * ibv_resize_cq keeps the completions nobody polled yet, in order. b's SEND
 * leaves b after the ACKs of a's WRITEs and on the same path, so once a has
 * its receive completion, every WRITE completion sits unpolled in a's CQ.
 */
static void check_resize_cq(void)
{
	enum { WRITES = 8, WRITE_BYTES = 8 };
	struct ibv_send_wr wr[WRITES], send;
	struct ibv_sge sge[WRITES], send_sge, recv_sge;
	struct ibv_recv_wr recv;
	struct buf *local, *remote, *a_in, *b_out;
	struct timespec start;
	struct ibv_wc wc;
	struct pair p;
	int rc;

	if (!pair_open(&p, &side_default, &side_default))
		goto out;
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	remote = buf_new(&dev_b, 4096, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, UNTOUCHED);
	a_in = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	b_out = buf_new(&dev_b, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	if (!local || !remote || !a_in || !b_out)
		goto out;
	fill_pattern(local->p, WRITES * WRITE_BYTES, 21, 0);
	recv_sge = sge_of(a_in, 0, 64);
	recv = (struct ibv_recv_wr){ .wr_id = 500, .sg_list = &recv_sge, .num_sge = 1 };
	if (!post_recv(p.a.qp, &recv, "resize: receive"))
		goto out;
	for (int i = 0; i < WRITES; i++) {
		sge[i] = sge_of(local, i * WRITE_BYTES, WRITE_BYTES);
		wr[i] = (struct ibv_send_wr){
			.wr_id = 1 + i, .sg_list = &sge[i], .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED, .next = i + 1 < WRITES ? &wr[i + 1] : NULL,
			.wr.rdma = { .remote_addr = raddr_of(remote, i * WRITE_BYTES), .rkey = remote->mr->rkey },
		};
	}
	if (!post_send(p.a.qp, wr, "resize: WRITEs"))
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (pattern_mismatch(remote->p, WRITES * WRITE_BYTES, 21, 0) < WRITES * WRITE_BYTES &&
	       elapsed_ms(&start) < (long)completion_wait_ms)
		usleep(100);
	check_pattern(remote->p, WRITES * WRITE_BYTES, 21, 0, "resize: WRITE data placed");
	send_sge = sge_of(b_out, 0, 64);
	send = (struct ibv_send_wr){ .wr_id = 600, .sg_list = &send_sge, .num_sge = 1,
				     .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	if (!post_send(p.b.qp, &send, "resize: SEND back") ||
	    !expect_wc(p.a.recv_cq, "resize: SEND back received",
		       (struct want){ 500, IBV_WC_SUCCESS, IBV_WC_RECV, 64 }, NULL) ||
	    !expect_wc(p.a.send_cq, "resize: first WRITE polled before",
		       (struct want){ 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL))
		goto out;
	rc = ibv_resize_cq(p.a.send_cq, 2);
	check(rc == EINVAL, "resize: to 2 with %d unpolled -> EINVAL (%s)", WRITES - 1, strerror(rc));
	rc = ibv_resize_cq(p.a.send_cq, 12);
	check(rc == 0 && p.a.send_cq->cqe >= 12, "resize: to 12 -> 0, cqe %d (%s)",
	      p.a.send_cq->cqe, strerror(rc));
	for (int i = 1; i < WRITES; i++)
		if (!expect_wc(p.a.send_cq, "resize: WRITE completion kept",
			       (struct want){ 1 + i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL))
			goto out;
	check(ibv_poll_cq(p.a.send_cq, 1, &wc) == 0, "resize: no completion twice");
	wr[0].wr_id = 9;
	wr[0].next = NULL;
	if (post_send(p.a.qp, wr, "resize: WRITE after"))
		expect_wc(p.a.send_cq, "resize: completion after the resize",
			  (struct want){ 9, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL);
out:
	pair_close(&p);
	bufs_free();
}

static const struct named_check checks[] = {
	{ "SEND over MRs", check_send_over_mrs },
	{ "RDMA WRITE over MRs", check_write_over_mrs },
	{ "RDMA READ over MRs", check_read_over_mrs },
	{ "immediate data", check_immediate },
	{ "RQ of one SGE", check_rq_one_sge },
	{ "unsignaled WRs", check_unsignaled },
	{ "receive too small", check_receive_too_small },
	{ "remote access errors", check_remote_access_errors },
	{ "too many SGEs", check_bad_wr_too_many_sges },
	{ "full SQ", check_sq_full },
	{ "bad opcode", check_bad_opcode },
	{ "inline data", check_inline },
	{ "ibv_qp_ex", check_qp_ex },
	{ "resize CQ", check_resize_cq },
};

int main(int argc, char **argv)
{
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
