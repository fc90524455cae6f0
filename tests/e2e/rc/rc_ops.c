/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RC operations beyond SEND/WRITE/READ through the public verbs API:
 * atomics (fetch-and-add totals exact, compare-and-swap, alignment and
 * access errors), SEND_WITH_INV and LOCAL_INV (the invalidated rkey gives
 * remote access errors), memory windows (a type 2 window's rkey before
 * any bind is refused; binds with LOCAL_WRITE in the window's rights are
 * taken), fence ordering (a READ followed by a fenced
 * WRITE over its source returns the old data), and the same through the
 * ibv_qp_ex work-request API.
 *
 * The harness is verbs_pair.c, as for rc_errors.c: one process, a fresh QP
 * pair per check, QP "a" the requester on device A, "b" the responder on
 * device B.
 *
 *   rc_ops DEVICE_A DEVICE_B [atomics]   one line per check, then "N passed"
 *                              and "N failed"; exit 0 when none failed;
 *                              "atomics": only the atomic results (for
 *                              runs under injected faults)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define FA_COUNT 100		/* fetch-and-adds in the totals check */
#define FA_START 1000
#define FENCE_BYTES 65536	/* READ long enough that a WRITE could overtake it */
#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define RWA (RW | IBV_ACCESS_REMOTE_ATOMIC)

/* side_default with room in the SQ for FA_COUNT fetch-and-adds in flight. */
static const struct side_spec ops_side = {
	.cap = { .max_send_wr = 128, .max_recv_wr = 16, .max_send_sge = 4, .max_recv_sge = 4 },
	.send_cqe = CQ_DEPTH, .recv_cqe = CQ_DEPTH, .knobs = QP_KNOBS_DEFAULT,
};

static bool all_zero(const uint8_t *p, size_t len)
{
	return all_bytes(p, len, 0);
}

static uint64_t *word_at(const struct buf *b, size_t offset)
{
	return (uint64_t *)(void *)(b->p + offset);
}

/* FA_COUNT fetch-and-adds of 1..FA_COUNT: each saw a distinct value, the total is exact. */
static void check_fetch_add_total(void)
{
	static struct ibv_send_wr wr[FA_COUNT];
	static struct ibv_sge sge[FA_COUNT];
	struct buf *counter, *results;
	uint64_t expect = FA_START, sum = 0, sum_seen = 0;
	struct pair p;
	bool ok = true;

	if (!pair_open(&p, &ops_side, &ops_side))
		goto out;
	counter = buf_new(&dev_b, 4096, 4096, RWA, 0);
	results = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	if (!counter || !results)
		goto out;
	*word_at(counter, 8) = FA_START;
	for (int i = 0; i < FA_COUNT; i++) {
		sge[i] = sge_of(results, (size_t)i * 8, 8);
		wr[i] = (struct ibv_send_wr){
			.wr_id = 0x100 + (uint64_t)i, .sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .send_flags = IBV_SEND_SIGNALED,
			.wr.atomic = { .remote_addr = raddr_of(counter, 8), .rkey = counter->mr->rkey,
				       .compare_add = (uint64_t)i + 1 },
			.next = i + 1 < FA_COUNT ? &wr[i + 1] : NULL,
		};
		sum += (uint64_t)i + 1;
	}
	if (!post_send(p.a.qp, wr, "fetch-and-add"))
		goto out;
	for (int i = 0; i < FA_COUNT && ok; i++) {
		struct ibv_wc wc;

		ok = wait_wc(p.a.send_cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
		     wc.wr_id == 0x100 + (uint64_t)i && wc.opcode == IBV_WC_FETCH_ADD &&
		     wc.byte_len == 8;
		if (!ok)
			check(false, "fetch-and-add %d: completion wr_id 0x%" PRIx64 " %s opcode %d len %u",
			      i, wc.wr_id, ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
	}
	check(ok, "fetch-and-add: %d completions IBV_WC_FETCH_ADD, byte_len 8, in order", FA_COUNT);
	/* One QP in order: add i saw FA_START plus the adds before it. */
	for (int i = 0; i < FA_COUNT; i++) {
		sum_seen += *word_at(results, (size_t)i * 8) == expect;
		expect += (uint64_t)i + 1;
	}
	check(sum_seen == FA_COUNT, "fetch-and-add: every original value right (%" PRIu64 " of %d)",
	      sum_seen, FA_COUNT);
	check(*word_at(counter, 8) == FA_START + sum, "fetch-and-add: total %" PRIu64 " (want %" PRIu64 ")",
	      *word_at(counter, 8), FA_START + sum);
	check(*word_at(counter, 0) == 0 && *word_at(counter, 16) == 0, "fetch-and-add: neighbours untouched");
out:
	pair_close(&p);
	bufs_free();
}

static void post_cmp_swap(struct pair *p, struct buf *local, struct buf *remote, uint64_t wr_id,
			  uint64_t compare, uint64_t swap)
{
	struct ibv_sge sge = sge_of(local, 0, 8);
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = raddr_of(remote, 0), .rkey = remote->mr->rkey,
			       .compare_add = compare, .swap = swap },
	};

	post_send(p->a.qp, &wr, "compare-and-swap");
}

static void check_cmp_swap(void)
{
	struct buf *local, *remote;
	struct pair p;

	if (!pair_open(&p, &ops_side, &ops_side))
		goto out;
	remote = buf_new(&dev_b, 4096, 4096, RWA, 0);
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	if (!remote || !local)
		goto out;
	*word_at(remote, 0) = 0x1111;
	post_cmp_swap(&p, local, remote, 1, 0x2222, 0x3333);	/* no match */
	if (expect_wc(p.a.send_cq, "compare-and-swap, no match",
		      (struct want){ 1, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP, 8 }, NULL))
		check(*word_at(local, 0) == 0x1111 && *word_at(remote, 0) == 0x1111,
		      "compare-and-swap, no match: original 0x1111 returned, memory kept");
	post_cmp_swap(&p, local, remote, 2, 0x1111, 0x4444);	/* match */
	if (expect_wc(p.a.send_cq, "compare-and-swap, match",
		      (struct want){ 2, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP, 8 }, NULL))
		check(*word_at(local, 0) == 0x1111 && *word_at(remote, 0) == 0x4444,
		      "compare-and-swap, match: original 0x1111 returned, memory now 0x4444");
out:
	pair_close(&p);
	bufs_free();
}

/* One atomic that must fail at the responder with status. */
static void atomic_error(const char *what, int remote_access, size_t offset, enum ibv_wc_status status)
{
	struct buf *local, *remote;
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	struct pair p;

	if (!pair_open(&p, &ops_side, &ops_side))
		goto out;
	remote = buf_new(&dev_b, 4096, 4096, remote_access, 0);
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	if (!remote || !local)
		goto out;
	sge = sge_of(local, 0, 8);
	wr = (struct ibv_send_wr){
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = raddr_of(remote, offset), .rkey = remote->mr->rkey,
			       .compare_add = 1 },
	};
	if (post_send(p.a.qp, &wr, what))
		expect_wc(p.a.send_cq, what, (struct want){ 7, status, -1, -1 }, NULL);
	check(all_zero(remote->p, 64), "%s: remote memory untouched", what);
out:
	pair_close(&p);
	bufs_free();
}

/* A responder with max_dest_rd_atomic 0 has no resources for READ or atomics. */
static void no_responder_resources(void)
{
	const char *what = "atomic to a QP with max_dest_rd_atomic 0";
	struct buf *local, *remote;
	struct ibv_sge sge;
	struct side_spec responder = ops_side;
	struct ibv_send_wr wr;
	struct pair p;

	responder.knobs.max_dest_rd_atomic = 0;
	if (!pair_open(&p, &ops_side, &responder))
		goto out;
	remote = buf_new(&dev_b, 4096, 4096, RWA, 0);
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	if (!remote || !local)
		goto out;
	sge = sge_of(local, 0, 8);
	wr = (struct ibv_send_wr){
		.wr_id = 8, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = raddr_of(remote, 0), .rkey = remote->mr->rkey,
			       .compare_add = 1 },
	};
	if (post_send(p.a.qp, &wr, what))
		expect_wc(p.a.send_cq, what, (struct want){ 8, IBV_WC_REM_INV_REQ_ERR, -1, -1 }, NULL);
	check(all_zero(remote->p, 8), "%s: remote memory untouched", what);
out:
	pair_close(&p);
	bufs_free();
}

static void check_atomic_errors(void)
{
	no_responder_resources();
	atomic_error("atomic at a misaligned address", RWA, 4, IBV_WC_REM_INV_REQ_ERR);
	atomic_error("atomic on an MR without REMOTE_ATOMIC", RW, 0, IBV_WC_REM_ACCESS_ERR);
}

/* WRITE through rkey into remote must fail with REM_ACCESS_ERR and leave it untouched. */
static void expect_write_refused(struct pair *p, struct buf *local, struct buf *remote, uint32_t rkey,
				 const char *what)
{
	struct ibv_sge sge = sge_of(local, 0, 64);
	struct ibv_send_wr wr = {
		.wr_id = 0x77, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr_of(remote, 0), .rkey = rkey },
	};

	if (post_send(p->a.qp, &wr, what))
		expect_wc(p->a.send_cq, what, (struct want){ 0x77, IBV_WC_REM_ACCESS_ERR, -1, -1 }, NULL);
	check(all_bytes(remote->p, 64, UNTOUCHED), "%s: remote memory untouched", what);
}

/* b invalidates its own MR's rkey with LOCAL_INV (post_send or ibv_qp_ex); a's WRITE is refused. */
static void local_inv(bool qp_ex)
{
	const char *what = qp_ex ? "ibv_wr_local_inv, then WRITE" : "LOCAL_INV, then WRITE";
	struct side_spec responder = ops_side;
	struct buf *local, *remote;
	struct ibv_send_wr wr, *bad;
	struct pair p;
	int ret;

	responder.qp_ex = qp_ex;
	if (!pair_open(&p, &ops_side, &responder))
		goto out;
	remote = buf_new(&dev_b, 4096, 4096, RW, UNTOUCHED);
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 1);
	if (!remote || !local)
		goto out;
	if (qp_ex) {
		struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(p.b.qp);

		ibv_wr_start(qpx);
		qpx->wr_id = 0x11;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_local_inv(qpx, remote->mr->rkey);
		ret = ibv_wr_complete(qpx);
	} else {
		wr = (struct ibv_send_wr){ .wr_id = 0x11, .opcode = IBV_WR_LOCAL_INV,
					   .send_flags = IBV_SEND_SIGNALED,
					   .invalidate_rkey = remote->mr->rkey };
		ret = ibv_post_send(p.b.qp, &wr, &bad);
	}
	check(ret == 0, "%s: posting the LOCAL_INV: %s", what, strerror(ret));
	if (ret || !expect_wc(p.b.send_cq, what, (struct want){ 0x11, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, -1 },
			      NULL))
		goto out;
	expect_write_refused(&p, local, remote, remote->mr->rkey, what);
out:
	pair_close(&p);
	bufs_free();
}

/* a sends SEND_WITH_INV of b's MR rkey (post_send or ibv_qp_ex); b sees it; a's WRITE is refused. */
static void send_inv(bool qp_ex)
{
	const char *what = qp_ex ? "ibv_wr_send_inv, then WRITE" : "SEND_WITH_INV, then WRITE";
	struct side_spec requester = ops_side;
	struct buf *local, *remote, *in;
	struct ibv_sge sge, in_sge;
	struct ibv_recv_wr rwr;
	struct ibv_send_wr wr;
	struct ibv_wc wc;
	struct pair p;
	int ret = 0;

	requester.qp_ex = qp_ex;
	if (!pair_open(&p, &requester, &ops_side))
		goto out;
	remote = buf_new(&dev_b, 4096, 4096, RW, UNTOUCHED);
	in = buf_new(&dev_b, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 1);
	if (!remote || !local || !in)
		goto out;
	in_sge = sge_of(in, 0, 4096);
	rwr = (struct ibv_recv_wr){ .wr_id = 0xb1, .sg_list = &in_sge, .num_sge = 1 };
	if (!post_recv(p.b.qp, &rwr, what))
		goto out;
	sge = sge_of(local, 0, 32);
	if (qp_ex) {
		struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(p.a.qp);

		ibv_wr_start(qpx);
		qpx->wr_id = 0x21;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send_inv(qpx, remote->mr->rkey);
		ibv_wr_set_sge(qpx, sge.lkey, sge.addr, sge.length);
		ret = ibv_wr_complete(qpx);
		check(ret == 0, "%s: ibv_wr_complete: %s", what, strerror(ret));
	} else {
		wr = (struct ibv_send_wr){ .wr_id = 0x21, .sg_list = &sge, .num_sge = 1,
					   .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
					   .invalidate_rkey = remote->mr->rkey };
		if (!post_send(p.a.qp, &wr, what))
			ret = -1;
	}
	if (ret || !expect_wc(p.a.send_cq, what, (struct want){ 0x21, IBV_WC_SUCCESS, IBV_WC_SEND, -1 },
			      NULL))
		goto out;
	if (expect_wc(p.b.recv_cq, what, (struct want){ 0xb1, IBV_WC_SUCCESS, IBV_WC_RECV, 32 }, &wc))
		check((wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == remote->mr->rkey,
		      "%s: receive carries IBV_WC_WITH_INV and rkey 0x%08x (got flags 0x%x rkey 0x%08x)",
		      what, remote->mr->rkey, wc.wc_flags, wc.invalidated_rkey);
	expect_write_refused(&p, local, remote, remote->mr->rkey, what);
out:
	pair_close(&p);
	bufs_free();
}

static void check_invalidate(void)
{
	local_inv(false);
	local_inv(true);
	send_inv(false);
	send_inv(true);
}

/* A type 2 window's rkey before any bind reaches nothing. */
static void check_unbound_window(void)
{
	const char *what = "WRITE through an unbound type 2 window";
	struct buf *local, *remote;
	struct ibv_mw *mw = NULL;
	struct pair p;

	if (!pair_open(&p, &ops_side, &ops_side))
		goto out;
	remote = buf_new(&dev_b, 4096, 4096, RW | IBV_ACCESS_MW_BIND, UNTOUCHED);
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 1);
	if (!remote || !local)
		goto out;
	mw = ibv_alloc_mw(dev_b.pd, IBV_MW_TYPE_2);
	check(mw != NULL, "ibv_alloc_mw type 2: %s", mw ? "ok" : strerror(errno));
	if (!mw)
		goto out;
	check(mw->rkey != 0 && mw->rkey != remote->mr->rkey, "type 2 window rkey 0x%08x", mw->rkey);
	expect_write_refused(&p, local, remote, mw->rkey, what);
out:
	if (mw)
		check(ibv_dealloc_mw(mw) == 0, "ibv_dealloc_mw");
	pair_close(&p);
	bufs_free();
}

/*
 * A window of the given type over bytes [256, 256 + 1024) of b's MR, bound
 * through b's QP (ibv_bind_mw for type 1, IBV_WR_BIND_MW or ibv_wr_bind_mw
 * for type 2), its rights REMOTE_WRITE and, with local_write, LOCAL_WRITE
 * (a ConnectX takes it: local rights come from the MR): a's WRITE through
 * it lands; for type 2 a SEND_WITH_INV of its rkey closes it, else a WRITE
 * past its end is refused.
 */
static void window_case(enum ibv_mw_type type, bool qp_ex, bool local_write)
{
	struct side_spec responder = ops_side;
	struct ibv_mw_bind_info info;
	struct buf *local, *remote, *in;
	struct ibv_sge sge, in_sge;
	struct ibv_send_wr wr;
	struct ibv_recv_wr rwr;
	struct ibv_mw *mw = NULL;
	struct pair p;
	char what[64];

	snprintf(what, sizeof(what), "%s%s", type == IBV_MW_TYPE_1 ? "type 1 window" :
		 qp_ex ? "type 2 window by ibv_wr_bind_mw" : "type 2 window",
		 local_write ? " with LOCAL_WRITE" : "");
	responder.qp_ex = qp_ex;
	if (!pair_open(&p, &ops_side, &responder))
		goto out;
	remote = buf_new(&dev_b, 4096, 4096, RW | IBV_ACCESS_MW_BIND, UNTOUCHED);
	in = buf_new(&dev_b, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 1);
	mw = ibv_alloc_mw(dev_b.pd, type);
	if (!remote || !local || !in || !mw) {
		check(false, "%s: buffers and ibv_alloc_mw: %s", what, strerror(errno));
		goto out;
	}
	info = (struct ibv_mw_bind_info){ .mr = remote->mr, .addr = raddr_of(remote, 256),
					  .length = 1024,
					  .mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
							     (local_write ? IBV_ACCESS_LOCAL_WRITE : 0) };
	if (!bind_window(&p.b, mw, &info, 0x31, what))
		goto out;
	sge = sge_of(local, 0, 64);
	wr = (struct ibv_send_wr){ .wr_id = 0x32, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				   .send_flags = IBV_SEND_SIGNALED,
				   .wr.rdma = { .remote_addr = raddr_of(remote, 512), .rkey = mw->rkey } };
	if (!post_send(p.a.qp, &wr, what) ||
	    !expect_wc(p.a.send_cq, what, (struct want){ 0x32, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL))
		goto out;
	check(all_bytes(remote->p + 512, 64, 1) && all_bytes(remote->p, 512, UNTOUCHED),
	      "%s: WRITE through the window landed in place", what);
	if (type == IBV_MW_TYPE_2) {
		in_sge = sge_of(in, 0, 4096);
		rwr = (struct ibv_recv_wr){ .wr_id = 0xb1, .sg_list = &in_sge, .num_sge = 1 };
		wr = (struct ibv_send_wr){ .wr_id = 0x33, .sg_list = &sge, .num_sge = 1,
					   .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
					   .invalidate_rkey = mw->rkey };
		if (!post_recv(p.b.qp, &rwr, what) || !post_send(p.a.qp, &wr, what) ||
		    !expect_wc(p.a.send_cq, what, (struct want){ 0x33, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL) ||
		    !expect_wc(p.b.recv_cq, what, (struct want){ 0xb1, IBV_WC_SUCCESS, IBV_WC_RECV, 64 }, NULL))
			goto out;
		expect_write_refused(&p, local, remote, mw->rkey, "type 2 window after SEND_WITH_INV");
	} else {
		wr.wr_id = 0x77;
		wr.wr.rdma.remote_addr = raddr_of(remote, 256 + 1024 - 32);
		if (post_send(p.a.qp, &wr, what))
			expect_wc(p.a.send_cq, "type 1 window: WRITE past its end",
				  (struct want){ 0x77, IBV_WC_REM_ACCESS_ERR, -1, -1 }, NULL);
		check(all_bytes(remote->p + 1024, 3072, UNTOUCHED), "%s: nothing written past it", what);
	}
out:
	if (mw)
		check(ibv_dealloc_mw(mw) == 0, "%s: ibv_dealloc_mw", what);
	pair_close(&p);
	bufs_free();
}

static void check_windows(void)
{
	for (int local_write = 0; local_write < 2; local_write++) {
		window_case(IBV_MW_TYPE_1, false, local_write);
		window_case(IBV_MW_TYPE_2, false, local_write);
		window_case(IBV_MW_TYPE_2, true, local_write);
	}
}

/* READ of source, then a fenced op overwriting source: the READ got the old bytes. */
static void fence_case(bool fenced_send)
{
	const char *what = fenced_send ? "READ then fenced SEND into its source" :
					 "READ then fenced WRITE over its source";
	struct buf *source, *dest, *newdata;
	struct ibv_sge read_sge, write_sge, in_sge;
	struct ibv_send_wr wr[2];
	struct ibv_recv_wr rwr;
	struct pair p;

	if (!pair_open(&p, &ops_side, &ops_side))
		goto out;
	source = buf_new(&dev_b, FENCE_BYTES, FENCE_BYTES, RW, 0x0d);
	dest = buf_new(&dev_a, FENCE_BYTES, FENCE_BYTES, IBV_ACCESS_LOCAL_WRITE, 0);
	newdata = buf_new(&dev_a, FENCE_BYTES, FENCE_BYTES, IBV_ACCESS_LOCAL_WRITE, 0x2e);
	if (!source || !dest || !newdata)
		goto out;
	read_sge = sge_of(dest, 0, FENCE_BYTES);
	write_sge = sge_of(newdata, 0, FENCE_BYTES);
	if (fenced_send) {
		in_sge = sge_of(source, 0, FENCE_BYTES);
		rwr = (struct ibv_recv_wr){ .wr_id = 0xb1, .sg_list = &in_sge, .num_sge = 1 };
		if (!post_recv(p.b.qp, &rwr, what))
			goto out;
	}
	wr[0] = (struct ibv_send_wr){
		.wr_id = 1, .sg_list = &read_sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr_of(source, 0), .rkey = source->mr->rkey },
		.next = &wr[1],
	};
	wr[1] = (struct ibv_send_wr){
		.wr_id = 2, .sg_list = &write_sge, .num_sge = 1,
		.opcode = fenced_send ? IBV_WR_SEND : IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE,
		.wr.rdma = { .remote_addr = raddr_of(source, 0), .rkey = source->mr->rkey },
	};
	if (!post_send(p.a.qp, wr, what))
		goto out;
	if (expect_wc(p.a.send_cq, what, (struct want){ 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, FENCE_BYTES },
		      NULL))
		check(all_bytes(dest->p, FENCE_BYTES, 0x0d), "%s: the READ returned the old data", what);
	expect_wc(p.a.send_cq, what, (struct want){ 2, IBV_WC_SUCCESS,
		  fenced_send ? IBV_WC_SEND : IBV_WC_RDMA_WRITE, -1 }, NULL);
	check(all_bytes(source->p, FENCE_BYTES, 0x2e), "%s: then the source was overwritten", what);
out:
	pair_close(&p);
	bufs_free();
}

static void check_fence(void)
{
	fence_case(false);
	fence_case(true);
}

/* Atomics through ibv_qp_ex: a fetch-and-add then a compare-and-swap in one batch. */
static void check_qp_ex_atomics(void)
{
	struct side_spec requester = ops_side;
	struct buf *local, *remote;
	struct ibv_qp_ex *qpx;
	struct pair p;
	int ret;

	requester.qp_ex = true;
	if (!pair_open(&p, &requester, &ops_side))
		goto out;
	remote = buf_new(&dev_b, 4096, 4096, RWA, 0);
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	qpx = ibv_qp_to_qp_ex(p.a.qp);
	if (!remote || !local || !qpx)
		goto out;
	*word_at(remote, 0) = 40;
	ibv_wr_start(qpx);
	qpx->wr_flags = IBV_SEND_SIGNALED;
	qpx->wr_id = 1;
	ibv_wr_atomic_fetch_add(qpx, remote->mr->rkey, raddr_of(remote, 0), 2);
	ibv_wr_set_sge(qpx, local->mr->lkey, raddr_of(local, 0), 8);
	qpx->wr_id = 2;
	ibv_wr_atomic_cmp_swp(qpx, remote->mr->rkey, raddr_of(remote, 0), 42, 99);
	ibv_wr_set_sge(qpx, local->mr->lkey, raddr_of(local, 8), 8);
	ret = ibv_wr_complete(qpx);
	check(ret == 0, "ibv_qp_ex atomics: ibv_wr_complete: %s", strerror(ret));
	if (ret)
		goto out;
	expect_wc(p.a.send_cq, "ibv_wr_atomic_fetch_add", (struct want){ 1, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, 8 },
		  NULL);
	expect_wc(p.a.send_cq, "ibv_wr_atomic_cmp_swp", (struct want){ 2, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP, 8 },
		  NULL);
	check(*word_at(local, 0) == 40 && *word_at(local, 8) == 42 && *word_at(remote, 0) == 99,
	      "ibv_qp_ex atomics: originals 40 and 42, memory 99 (got %" PRIu64 ", %" PRIu64 ", %" PRIu64 ")",
	      *word_at(local, 0), *word_at(local, 8), *word_at(remote, 0));
out:
	pair_close(&p);
	bufs_free();
}

#define ATOMIC_RESULT_CHECKS 2
static const struct named_check checks[] = {
	/* The first ATOMIC_RESULT_CHECKS: no error path, right under faults too. */
	{ "fetch-and-add total", check_fetch_add_total },
	{ "compare-and-swap", check_cmp_swap },
	{ "atomic errors", check_atomic_errors },
	{ "invalidated rkey", check_invalidate },
	{ "unbound window", check_unbound_window },
	{ "memory windows", check_windows },
	{ "fence ordering", check_fence },
	{ "ibv_qp_ex atomics", check_qp_ex_atomics },
};

int main(int argc, char **argv)
{
	size_t nchecks = sizeof(checks) / sizeof(checks[0]);

	setvbuf(stdout, NULL, _IOLBF, 0);	/* lines in order even if a timeout kills us */
	if (argc == 4 && !strcmp(argv[3], "atomics"))
		nchecks = ATOMIC_RESULT_CHECKS;
	else if (argc != 3) {
		fprintf(stderr, "usage: %s DEVICE_A DEVICE_B [atomics]\n", argv[0]);
		return 1;
	}
	return run_checks(argv[1], argv[2], checks, nchecks);
}
