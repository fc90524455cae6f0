/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A QP reused after RESET starts from nothing, as on mlx5: no WRITE posted
 * before the RESET runs again, none of its completions still in the CQ
 * comes back, and the receive queue is whole again after every cycle.
 * Data are checked at the responder: the old WRITEs' target keeps its
 * bytes after their source changed. A SEND posted right before its QP
 * goes to ERR still leaves: the device sees a doorbell before the command
 * that follows it.
 *
 *   rc_reset DEV_A DEV_B
 *
 * One line per check, then "N passed" and "N failed"; exit 0 when none failed.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define WAIT_MS 10000
#define QUIET_MS 200		/* how long nothing may complete where nothing may */
#define MSG 256			/* bytes of each WRITE or SEND */
#define OLD_WRITES 3
#define RECV_CYCLES 4
#define SENDS_PER_CYCLE 2
#define DEPTH 8

static const struct side_spec reset_side = {
	.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1, .max_recv_sge = 1 },
	.send_cqe = 4 * DEPTH, .recv_cqe = 4 * DEPTH,
	.knobs = QP_KNOBS_DEFAULT,
};

static struct pair p;
static struct ibv_comp_channel *channel;	/* a's send CQ reports to it */
static uint32_t psn_step;

static bool post_write(struct buf *src, struct buf *dst, size_t slot, uint64_t wr_id, bool signaled)
{
	struct ibv_sge sge = sge_of(src, slot * MSG, MSG);
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
		.wr.rdma = { .remote_addr = raddr_of(dst, slot * MSG), .rkey = dst->mr->rkey },
	};

	return post_send(p.a.qp, &wr, "WRITE");
}

/* Both QPs to RESET and connected again, on fresh PSNs (the responder forgot its own). */
static bool pair_reset(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	const struct qp_knobs k = QP_KNOBS_DEFAULT;
	int ret;

	psn_step += 0x100;
	ret = ibv_modify_qp(p.a.qp, &attr, IBV_QP_STATE);
	if (!ret)
		ret = ibv_modify_qp(p.b.qp, &attr, IBV_QP_STATE);
	if (!ret)
		ret = qp_connect(p.a.qp, p.b.qp->qp_num, &dev_b.gid, PSN_A + psn_step,
				 PSN_B + psn_step, &k);
	if (!ret)
		ret = qp_connect(p.b.qp, p.a.qp->qp_num, &dev_a.gid, PSN_B + psn_step,
				 PSN_A + psn_step, &k);
	check(ret == 0, "both QPs through RESET and back to RTS (%s)", strerror(ret));
	return ret == 0;
}

/* Nothing more on cq for QUIET_MS. */
static void expect_quiet(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;
	int got = poll_wc(cq, &wc, QUIET_MS);

	check(got == 0, "%s: no other completion (got %s wr_id 0x%" PRIx64 ")", what,
	      got > 0 ? ibv_wc_status_str(wc.status) : "none", got > 0 ? wc.wr_id : 0);
}

/* The completion event of a's send CQ: a CQE is in it, not yet polled. */
static bool wait_cq_event(void)
{
	struct pollfd pfd = { .fd = channel->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *ctx;

	if (poll(&pfd, 1, WAIT_MS) != 1 || ibv_get_cq_event(channel, &cq, &ctx)) {
		check(false, "completion event of the last WRITE");
		return false;
	}
	ibv_ack_cq_events(cq, 1);
	return true;
}

/*
 * OLD_WRITES WRITEs land (slots 0..2 of dst), then their source changes and
 * both QPs go through RESET; one WRITE of slot 3 follows. With polled says
 * whether the old completions were polled before the RESET or left in the
 * CQ (then only the last is signaled, and its event shows it arrived).
 */
static void writes_then_reset(bool polled)
{
	struct buf *src = buf_new(&dev_a, 4 * MSG, 4 * MSG, IBV_ACCESS_LOCAL_WRITE, 0);
	struct buf *dst = buf_new(&dev_b, 4 * MSG, 4 * MSG,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, UNTOUCHED);
	uint64_t id = polled ? 0x100 : 0x200;
	size_t i;

	if (!src || !dst)
		return;
	fill_pattern(src->p, OLD_WRITES * MSG, 1, 0);
	if (!polled && ibv_req_notify_cq(p.a.send_cq, 0)) {
		check(false, "arm a's send CQ");
		return;
	}
	for (i = 0; i < OLD_WRITES; i++)
		if (!post_write(src, dst, i, id + i, polled || i == OLD_WRITES - 1))
			return;
	for (i = 0; polled && i < OLD_WRITES; i++)
		expect_wc(p.a.send_cq, "old WRITE", (struct want){ id + i, IBV_WC_SUCCESS,
								   IBV_WC_RDMA_WRITE, -1 }, NULL);
	if (!polled && !wait_cq_event())
		return;
	check_pattern(dst->p, OLD_WRITES * MSG, 1, 0, "old WRITEs landed");
	fill_pattern(src->p, OLD_WRITES * MSG, 2, 0);	/* what a re-executed WRITE would carry */
	fill_pattern(src->p + OLD_WRITES * MSG, MSG, 3, 0);
	if (!pair_reset())
		return;
	if (!post_write(src, dst, OLD_WRITES, id + 0x10, true))
		return;
	expect_wc(p.a.send_cq, "the one WRITE after RESET completes, alone",
		  (struct want){ id + 0x10, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL);
	expect_quiet(p.a.send_cq, "after the one WRITE");
	check_pattern(dst->p + OLD_WRITES * MSG, MSG, 3, 0, "the new WRITE's bytes landed");
	check_pattern(dst->p, OLD_WRITES * MSG, 1, 0, "old WRITEs not executed again");
}

static void writes_polled_then_reset(void)
{
	writes_then_reset(true);
}

static void writes_unpolled_then_reset(void)
{
	writes_then_reset(false);
}

/*
 * Each cycle fills the receive queue, takes SENDS_PER_CYCLE messages into
 * it (wr_id and bytes checked) and resets both QPs with the rest posted.
 */
static void receives_across_resets(void)
{
	uint32_t depth = p.b.cap.max_recv_wr;
	struct buf *src = buf_new(&dev_a, MSG, MSG, IBV_ACCESS_LOCAL_WRITE, 0);
	struct buf *dst = buf_new(&dev_b, (size_t)depth * MSG, (size_t)depth * MSG,
				  IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	unsigned int cycle, i;
	char what[64];

	if (!src || !dst)
		return;
	for (cycle = 0; cycle < RECV_CYCLES; cycle++) {
		memset(dst->p, UNTOUCHED, dst->len);
		for (i = 0; i < depth; i++) {
			struct ibv_sge sge = sge_of(dst, (size_t)i * MSG, MSG);
			struct ibv_recv_wr wr = { .wr_id = cycle * 100 + i, .sg_list = &sge,
						  .num_sge = 1 };
			struct ibv_recv_wr *bad;
			int ret = ibv_post_recv(p.b.qp, &wr, &bad);

			if (ret) {
				check(false, "cycle %u: receive %u of %u posted: %s", cycle, i, depth,
				      strerror(ret));
				return;
			}
		}
		check(true, "cycle %u: %u receives posted", cycle, depth);
		for (i = 0; i < SENDS_PER_CYCLE; i++) {
			struct ibv_sge sge = sge_of(src, 0, MSG);
			struct ibv_send_wr wr = { .wr_id = 0x1000 + i, .sg_list = &sge, .num_sge = 1,
						  .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED };

			fill_pattern(src->p, MSG, 10 * cycle + i, 0);
			if (!post_send(p.a.qp, &wr, "SEND"))
				return;
			snprintf(what, sizeof(what), "cycle %u: SEND %u", cycle, i);
			expect_wc(p.a.send_cq, what, (struct want){ 0x1000 + i, IBV_WC_SUCCESS,
								    IBV_WC_SEND, -1 }, NULL);
			snprintf(what, sizeof(what), "cycle %u: receive %u", cycle, i);
			expect_wc(p.b.recv_cq, what, (struct want){ cycle * 100 + i, IBV_WC_SUCCESS,
								    IBV_WC_RECV, MSG }, NULL);
			check_pattern(dst->p + (size_t)i * MSG, MSG, 10 * cycle + i, 0, what);
		}
		if (!pair_reset())
			return;
		expect_quiet(p.b.recv_cq, "no receive completes at RESET");
	}
}

/*
 * A SEND posted, then its QP moved to ERR at once (rdma_disconnect right
 * behind a last message): the device saw the doorbell before the command,
 * so the SEND leaves; its own completion is flushed or successful, as the
 * ACK comes before the QP's move or after.
 */
static void send_then_error(void)
{
	struct buf *src = buf_new(&dev_a, MSG, MSG, IBV_ACCESS_LOCAL_WRITE, 0);
	struct buf *dst = buf_new(&dev_b, MSG, MSG, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	struct ibv_qp_attr err_attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_sge rsge, ssge;
	struct ibv_recv_wr rwr = { .wr_id = 0x77, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_send_wr swr = { .wr_id = 0x2000, .sg_list = &ssge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	if (!src || !dst)
		return;
	rsge = sge_of(dst, 0, MSG);
	ssge = sge_of(src, 0, MSG);
	fill_pattern(src->p, MSG, 77, 0);
	if (!post_recv(p.b.qp, &rwr, "b's receive"))
		return;
	/* Quiet first: the daemon asleep wakes to the doorbell's kick and the command at once. */
	poll(NULL, 0, QUIET_MS);
	if (!post_send(p.a.qp, &swr, "the SEND"))
		return;
	check(!ibv_modify_qp(p.a.qp, &err_attr, IBV_QP_STATE), "a's QP to ERR right behind it");
	if (expect_wc(p.b.recv_cq, "b: the SEND arrived",
		      (struct want){ 0x77, IBV_WC_SUCCESS, IBV_WC_RECV, MSG }, NULL))
		check_pattern(dst->p, MSG, 77, 0, "b: its bytes");
	check(wait_wc(p.a.send_cq, &wc) == 1 && wc.wr_id == 0x2000 &&
	      (wc.status == IBV_WC_WR_FLUSH_ERR || wc.status == IBV_WC_SUCCESS),
	      "a: the SEND completes, flushed or successful (%s)", ibv_wc_status_str(wc.status));
	pair_reset();
}

static const struct named_check checks[] = {
	{ "WRITEs polled, RESET, one WRITE", writes_polled_then_reset },
	{ "WRITEs unpolled, RESET, one WRITE", writes_unpolled_then_reset },
	{ "receives across RESET cycles", receives_across_resets },
	{ "a SEND, then its QP to ERR at once", send_then_error },
};

int main(int argc, char **argv)
{
	struct side_spec spec_a = reset_side;

	setvbuf(stdout, NULL, _IOLBF, 0);
	completion_wait_ms = WAIT_MS;
	if (argc != 3) {
		fprintf(stderr, "usage: rc_reset DEV_A DEV_B\n");
		return 2;
	}
	if (!dev_open(&dev_a, argv[1]) || !dev_open(&dev_b, argv[2]))
		goto out;
	/* a's send CQ on a channel: the unpolled case waits for its event. */
	channel = ibv_create_comp_channel(dev_a.ctx);
	spec_a.send_channel = channel;
	if (!channel || !pair_open(&p, &spec_a, &reset_side))
		goto out;
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		printf("== %s\n", checks[i].name);
		checks[i].run();
	}
out:
	pair_close(&p);
	if (channel)
		ibv_destroy_comp_channel(channel);
	bufs_free();
	dev_close(&dev_b);
	dev_close(&dev_a);
	return checks_finish();
}
