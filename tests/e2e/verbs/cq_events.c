/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Completion events as a ConnectX raises them, between an RC QP "a" on
 * DEV_A and "b" on DEV_B, through the public verbs API: one event per
 * arm, for a CQE no event reported before. A CQ armed again while the CQE
 * that raised its event is still unpolled (the loop of ibv_get_cq_event(3),
 * librpma's rpma_cq_wait) raises none until its next CQE; a CQE written
 * while the CQ was not armed raises one as soon as it is armed; an arm
 * with every CQE polled waits for the next. Solicited-only arms: a plain
 * SEND raises none, a solicited one or an error completion does, also
 * when it was written before the arm. Two CQs on one channel: each event
 * names its own CQ.
 *
 *   cq_events DEV_A DEV_B
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

#define MSG 64
#define RECVS 16		/* receives posted on each side when the pair opens */
#define QUIET_MS 300		/* an event not owed does not come in this long */

static struct pair p;
static struct ibv_comp_channel *ch_a, *ch_b;	/* a's two CQs; b's receive CQ */
static struct buf *a_buf, *b_buf;		/* [0, RECVS * MSG): receives; then a send */
static unsigned int sent;			/* SENDs of this pair so far: their seeds */

static bool post_recvs(struct side *s, struct buf *b)
{
	for (unsigned int i = 0; i < RECVS; i++) {
		struct ibv_sge sge = sge_of(b, (size_t)i * MSG, MSG);
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };

		if (!post_recv(s->qp, &wr, "post a receive"))
			return false;
	}
	return true;
}

/* The pair, a's CQs on ch_a and b's receive CQ on ch_b, RECVS receives posted on each side. */
static bool open_pair(void)
{
	struct side_spec spec_a = side_default, spec_b = side_default;

	sent = 0;
	ch_a = ibv_create_comp_channel(dev_a.ctx);
	ch_b = ibv_create_comp_channel(dev_b.ctx);
	if (!ch_a || !ch_b) {
		check(false, "completion channels: %s", strerror(errno));
		return false;
	}
	spec_a.send_channel = spec_a.recv_channel = ch_a;
	spec_b.recv_channel = ch_b;
	a_buf = buf_new(&dev_a, (RECVS + 1) * MSG, (RECVS + 1) * MSG, IBV_ACCESS_LOCAL_WRITE, 0);
	b_buf = buf_new(&dev_b, (RECVS + 1) * MSG, (RECVS + 1) * MSG, IBV_ACCESS_LOCAL_WRITE, 0);
	return a_buf && b_buf && pair_open(&p, &spec_a, &spec_b) && post_recvs(&p.a, a_buf) &&
	       post_recvs(&p.b, b_buf);
}

static void close_pair(void)
{
	pair_close(&p);
	if (ch_a)
		check(!ibv_destroy_comp_channel(ch_a), "destroy a's channel");
	if (ch_b)
		check(!ibv_destroy_comp_channel(ch_b), "destroy b's channel");
	ch_a = ch_b = NULL;
	bufs_free();
}

/* The CQ whose event ch delivers within ms (the event acknowledged), or NULL. */
static struct ibv_cq *event_on(struct ibv_comp_channel *ch, unsigned int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *ctx;

	if (poll(&pfd, 1, (int)ms) != 1 || ibv_get_cq_event(ch, &cq, &ctx))
		return NULL;
	ibv_ack_cq_events(cq, 1);
	return cq;
}

static void expect_event(struct ibv_comp_channel *ch, struct ibv_cq *cq, const char *what)
{
	struct ibv_cq *got = event_on(ch, completion_wait_ms);

	check(got == cq, "%s: an event, naming its CQ (%s)", what,
	      !got ? "none" : got == cq ? "yes" : "another CQ");
}

static void expect_no_event(struct ibv_comp_channel *ch, const char *what)
{
	check(event_on(ch, QUIET_MS) == NULL, "%s: no event", what);
}

static void arm(struct ibv_cq *cq, bool solicited_only)
{
	int err = ibv_req_notify_cq(cq, solicited_only);

	if (err)
		check(false, "ibv_req_notify_cq: %s", strerror(err));
}

/* A signaled SEND from s to its peer (solicited or not), its own seed in its bytes. */
static bool send_from(struct side *s, struct buf *b, bool solicited)
{
	struct ibv_sge sge = sge_of(b, (size_t)RECVS * MSG, MSG);
	struct ibv_send_wr wr = {
		.wr_id = 0x100 + sent, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | (solicited ? IBV_SEND_SOLICITED : 0),
	};

	fill_pattern(b->p + (size_t)RECVS * MSG, MSG, sent++, 0);
	return post_send(s->qp, &wr, "post a SEND");
}

/* The SEND's completion on a (it follows b's receive CQE: b's ACK came after it). */
static void a_sent(const char *what)
{
	expect_wc(p.a.send_cq, what, (struct want){ 0x100 + sent - 1, IBV_WC_SUCCESS, IBV_WC_SEND, -1 },
		  NULL);
}

/* b's next receive: receive i of the pair, the bytes of SEND seed. */
static void b_received(unsigned int i, unsigned int seed, const char *what)
{
	if (expect_wc(p.b.recv_cq, what, (struct want){ i, IBV_WC_SUCCESS, IBV_WC_RECV, MSG }, NULL))
		check_pattern(b_buf->p + (size_t)i * MSG, MSG, seed, 0, what);
}

/* A SEND from a to b, its completion on a; b's receive CQE is then written, unpolled. */
static void send_a_to_b(bool solicited, const char *what)
{
	if (send_from(&p.a, a_buf, solicited))
		a_sent(what);
}

/* Arm, one CQE, one event; no event more without another arm, or from an arm with all polled. */
static void one_event_per_arm(void)
{
	if (!open_pair())
		goto out;
	send_a_to_b(false, "a SEND before the CQ is armed");
	b_received(0, 0, "b: receive 0");
	expect_no_event(ch_a, "a's CQs never armed");
	arm(p.a.send_cq, false);
	expect_no_event(ch_a, "a's send CQ armed with every CQE polled");
	send_a_to_b(false, "the next SEND");
	b_received(1, 1, "b: receive 1");
	expect_event(ch_a, p.a.send_cq, "its CQE");
	send_a_to_b(false, "a SEND after the event, not armed again");
	b_received(2, 2, "b: receive 2");
	expect_no_event(ch_a, "an arm gives one event");
out:
	close_pair();
}

/*
 * ibv_get_cq_event(3)'s loop, as librpma's rpma_cq_wait runs it: the event,
 * its ack, the arm, then the poll of the CQE that raised the event. That
 * CQE raises no second event; the next SEND's does, round after round.
 */
static void armed_again_before_polling(void)
{
	char what[64];
	struct ibv_wc wc;

	if (!open_pair())
		goto out;
	arm(p.a.send_cq, false);
	for (unsigned int round = 0; round < 5; round++) {
		snprintf(what, sizeof(what), "round %u: the SEND's CQE", round);
		if (!send_from(&p.a, a_buf, false))
			break;
		expect_event(ch_a, p.a.send_cq, what);
		arm(p.a.send_cq, false);
		/* Polled at once, as rpma_cq_get_wc does: the event said it is there. */
		check(ibv_poll_cq(p.a.send_cq, 1, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
		      wc.wr_id == 0x100 + round, "%s: in the CQ when its event came", what);
		b_received(round, round, "b: its receive");
	}
	expect_no_event(ch_a, "armed again before the poll: the CQE its event reported");
	send_a_to_b(false, "a SEND with the CQ armed, polled by the harness");
	expect_event(ch_a, p.a.send_cq, "the next CQE");
out:
	close_pair();
}

/*
 * A CQE written while its CQ was not armed (the arm the NAPI way, after
 * the last poll) raises an event as soon as the CQ is armed; so does one
 * written after an event, before the arm that follows it.
 */
static void written_before_the_arm(void)
{
	if (!open_pair())
		goto out;
	send_a_to_b(false, "a SEND to b's CQ, not armed");
	arm(p.b.recv_cq, false);
	expect_event(ch_b, p.b.recv_cq, "b's CQ armed with that CQE unpolled");
	b_received(0, 0, "b: its receive");
	arm(p.b.recv_cq, false);
	expect_no_event(ch_b, "armed again with every CQE polled");
	send_a_to_b(false, "a SEND");
	expect_event(ch_b, p.b.recv_cq, "its CQE");
	send_a_to_b(false, "a SEND after the event, before the next arm");
	arm(p.b.recv_cq, false);
	expect_event(ch_b, p.b.recv_cq, "armed with both unpolled, the second one unreported");
	b_received(1, 1, "b: the first receive");
	b_received(2, 2, "b: the second receive");
out:
	close_pair();
}

/*
 * Armed for solicited completions: a plain SEND raises no event, a
 * solicited one does, also when written before the arm; a plain CQE left
 * unpolled raises none; an error completion (a receive flushed) does.
 */
static void solicited_only(void)
{
	struct ibv_qp_attr err_attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;

	if (!open_pair())
		goto out;
	arm(p.b.recv_cq, true);
	send_a_to_b(false, "a plain SEND");
	expect_no_event(ch_b, "b's CQ armed for solicited: the plain SEND's CQE");
	send_a_to_b(true, "a solicited SEND");
	expect_event(ch_b, p.b.recv_cq, "the solicited SEND's CQE");
	b_received(0, 0, "b: the plain SEND");
	b_received(1, 1, "b: the solicited SEND");
	send_a_to_b(false, "a plain SEND, b's CQ not armed");
	arm(p.b.recv_cq, true);
	expect_no_event(ch_b, "armed for solicited with a plain CQE unpolled");
	send_a_to_b(true, "a solicited SEND");
	expect_event(ch_b, p.b.recv_cq, "its CQE");
	send_a_to_b(true, "a solicited SEND after the event, before the next arm");
	arm(p.b.recv_cq, true);
	expect_event(ch_b, p.b.recv_cq, "armed for solicited with it unpolled and unreported");
	for (unsigned int i = 2; i < 5; i++)
		b_received(i, i, "b: a receive");
	arm(p.b.recv_cq, true);
	check(!ibv_modify_qp(p.b.qp, &err_attr, IBV_QP_STATE), "b's QP to ERR");
	expect_event(ch_b, p.b.recv_cq, "armed for solicited: the flushed receives' error CQEs");
	check(ibv_poll_cq(p.b.recv_cq, 1, &wc) == 1 && wc.status == IBV_WC_WR_FLUSH_ERR &&
	      wc.wr_id == 5, "b: receive 5 flushed");
out:
	close_pair();
}

/* a's send and receive CQs share ch_a: each event names the CQ whose CQE raised it. */
static void two_cqs_one_channel(void)
{
	if (!open_pair())
		goto out;
	arm(p.a.send_cq, false);
	arm(p.a.recv_cq, false);
	if (send_from(&p.b, b_buf, false)) {
		expect_wc(p.b.send_cq, "b's SEND to a completes",
			  (struct want){ 0x100, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
		expect_event(ch_a, p.a.recv_cq, "a's receive CQE");
		expect_no_event(ch_a, "a's send CQ, nothing sent");
	}
	send_a_to_b(false, "a's SEND to b");
	expect_event(ch_a, p.a.send_cq, "a's send CQE");
	if (expect_wc(p.a.recv_cq, "a: its receive", (struct want){ 0, IBV_WC_SUCCESS, IBV_WC_RECV,
								   MSG }, NULL))
		check_pattern(a_buf->p, MSG, 0, 0, "a: the bytes b sent");
out:
	close_pair();
}

static const struct named_check checks[] = {
	{ "one event per arm", one_event_per_arm },
	{ "armed again before polling the CQE of the event", armed_again_before_polling },
	{ "CQEs written before the arm", written_before_the_arm },
	{ "solicited-only arms", solicited_only },
	{ "two CQs on one channel", two_cqs_one_channel },
};

int main(int argc, char **argv)
{
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
