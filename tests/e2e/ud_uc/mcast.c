/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * UD multicast through the public verbs API. "mcast member DEV": one QP
 * attached to the group, which must receive every datagram sent to it
 * once, up to an "end" message that says how many came before. "mcast
 * main DEV_A DEV_B": a sender on DEV_A attached to the group itself but
 * created with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB (it hears none of its
 * own sends), three receivers on DEV_B (one attached twice, still one copy
 * each; one receiving through an SRQ), ibv_destroy_qp refused with EBUSY while attached, and no more
 * datagrams for a receiver once detached, a source QPN on UD QPs only.
 * "mcast unprivileged DEV", run without CAP_NET_RAW: no source QPN (EPERM).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "tests/e2e/harness/verbs_pair.h"

#define QKEY 0x11110000u
#define MCAST_QPN 0xffffffu
#define GROUP "239.1.2.3"
#define GRH_BYTES 40
#define MSG 64
#define SLOT 256		/* one receive: GRH and message */
#define RECVS 16
#define END_SEQ 0xffffffffu	/* the last message; its second word counts the others */
#define SOURCE_QPN 0x123456u
#define SOURCE_QPN_SEQ 100	/* after the end: the member no longer counts */
#define SILENCE_MS 300		/* a datagram not delivered gives no completion in this long */

struct ud {
	struct dev *dev;
	const char *name;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;	/* set before ud_open: the QP receives through it */
	struct buf *buf;	/* RECVS slots of receives, then one message to send */
};

static union ibv_gid group_gid;

static bool post_slot(struct ud *u, unsigned int slot)
{
	struct ibv_sge sge = sge_of(u->buf, slot * SLOT, SLOT);
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;
	int err;

	if (!u->srq)
		return post_recv(u->qp, &wr, "post a UD receive");
	err = ibv_post_srq_recv(u->srq, &wr, &bad);
	if (err)
		check(false, "%s: post an SRQ receive: %s", u->name, strerror(err));
	return !err;
}

static bool ud_open(struct ud *u, struct dev *d, const char *name, uint32_t create_flags)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_UD, .cap = { .max_send_wr = 16, .max_recv_wr = RECVS,
						.max_send_sge = 1, .max_recv_sge = 1 },
		.pd = d->pd, .comp_mask = IBV_QP_INIT_ATTR_PD, .srq = u->srq,
	};
	int err;

	u->dev = d;
	u->name = name;
	u->cq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
	u->buf = buf_new(d, RECVS * SLOT + MSG, RECVS * SLOT + MSG, IBV_ACCESS_LOCAL_WRITE, 0);
	if (!u->cq || !u->buf) {
		check(false, "%s: CQ and buffer", name);
		return false;
	}
	init.send_cq = init.recv_cq = u->cq;
	if (create_flags) {
		init.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
		init.create_flags = create_flags;
		init.source_qpn = SOURCE_QPN;
	}
	u->qp = ibv_create_qp_ex(d->ctx, &init);
	check(u->qp != NULL, "%s: create a UD QP on %s%s: %s", name, d->name,
	      u->srq ? " receiving through an SRQ" : "", u->qp ? "ok" : strerror(errno));
	if (!u->qp)
		return false;
	err = ud_to_rts(u->qp, QKEY, 0);
	check(!err, "%s: UD QP 0x%06x to RTS: %s", name, u->qp->qp_num, strerror(err));
	for (unsigned int i = 0; !err && i < RECVS; i++)
		if (!post_slot(u, i))
			return false;
	return !err;
}

static void ud_close(struct ud *u)
{
	int err;

	if (u->qp) {
		err = ibv_destroy_qp(u->qp);
		check(!err, "%s: destroy its QP: %s", u->name, strerror(err));
	}
	if (u->cq)
		ibv_destroy_cq(u->cq);
	if (u->srq)
		ibv_destroy_srq(u->srq);
	u->qp = NULL;
	u->cq = NULL;
	u->srq = NULL;
}

static void attach(struct ud *u, const char *what)
{
	int err = ibv_attach_mcast(u->qp, &group_gid, 0);

	check(!err, "%s: attach QP 0x%06x to " GROUP "%s: %s", u->name, u->qp->qp_num, what,
	      strerror(err));
}

/* Message seq (or the end message, counting count before it) from s to the group. */
static void send_to_group(struct ud *s, struct ibv_ah *ah, uint32_t seq, uint32_t count)
{
	uint8_t *msg = s->buf->p + RECVS * SLOT;
	struct ibv_sge sge = sge_of(s->buf, RECVS * SLOT, MSG);
	struct ibv_send_wr wr = { .wr_id = seq, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
				  .wr = { .ud = { .ah = ah, .remote_qpn = MCAST_QPN,
						  .remote_qkey = QKEY } } };

	fill_pattern(msg, MSG, seq, 0);
	memcpy(msg, &seq, sizeof(seq));
	memcpy(msg + sizeof(seq), &count, sizeof(count));
	if (post_send(s->qp, &wr, "post a send to the group"))
		expect_wc(s->cq, "the send to the group completes",
			  (struct want){ .wr_id = seq, .opcode = IBV_WC_SEND, .byte_len = -1 }, NULL);
}

/*
 * The next datagram u receives within ms: its sequence number (count
 * set for the end message) after checking the completion and the data;
 * -1 when none came.
 */
static int64_t receive(struct ud *u, unsigned int ms, uint32_t *count, uint32_t *src_qp)
{
	struct ibv_wc wc;
	const uint8_t *msg;
	uint32_t seq;

	if (poll_wc(u->cq, &wc, ms) != 1)
		return -1;
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
	      wc.byte_len == GRH_BYTES + MSG && (wc.wc_flags & IBV_WC_GRH),
	      "%s: a receive of GRH and %u bytes: status %s, byte_len %u", u->name, MSG,
	      ibv_wc_status_str(wc.status), wc.byte_len);
	msg = u->buf->p + wc.wr_id * SLOT + GRH_BYTES;
	memcpy(&seq, msg, sizeof(seq));
	memcpy(count, msg + sizeof(seq), sizeof(*count));
	*src_qp = wc.src_qp;
	if (seq != END_SEQ)
		check(pattern_mismatch(msg + 8, MSG - 8, seq, 8) == MSG - 8, "%s: message %u arrives intact",
		      u->name, seq);
	post_slot(u, (unsigned int)wc.wr_id);
	return seq;
}

/* u receives exactly the messages first..last-1, in order, then nothing more. */
static void expect_messages(struct ud *u, uint32_t first, uint32_t last)
{
	uint32_t count, src_qp;
	int64_t seq;

	for (uint32_t want = first; want < last; want++) {
		seq = receive(u, completion_wait_ms, &count, &src_qp);
		check(seq == want, "%s: message %u received (got %lld)", u->name, want,
		      (long long)seq);
	}
	seq = receive(u, SILENCE_MS, &count, &src_qp);
	check(seq < 0, "%s: nothing more (no second copy): %s", u->name,
	      seq < 0 ? "none" : "one more");
}

/*
 * IBV_QP_CREATE_SOURCE_QPN (the test runs as root, so CAP_NET_RAW): a UD
 * QP's datagrams carry the QPN it names; other QP types are refused.
 */
static void source_qpn(struct ud *r, struct ibv_ah *ah)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC, .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 },
		.pd = dev_a.pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.create_flags = IBV_QP_CREATE_SOURCE_QPN, .source_qpn = SOURCE_QPN,
	};
	struct ud s = { 0 };
	uint32_t count, src_qp = 0;
	struct ibv_qp *rc;
	int64_t seq;

	if (!ud_open(&s, &dev_a, "source-qpn sender", IBV_QP_CREATE_SOURCE_QPN))
		goto out;
	init.send_cq = init.recv_cq = s.cq;
	rc = ibv_create_qp_ex(dev_a.ctx, &init);
	check(!rc && errno == EOPNOTSUPP, "an RC QP with a source QPN: %s (want EOPNOTSUPP)",
	      rc ? "created" : strerror(errno));
	if (rc)
		ibv_destroy_qp(rc);
	send_to_group(&s, ah, SOURCE_QPN_SEQ, 0);
	seq = receive(r, completion_wait_ms, &count, &src_qp);
	check(seq == SOURCE_QPN_SEQ && src_qp == SOURCE_QPN,
	      "%s: a datagram from source QPN 0x%06x (got seq %lld from 0x%06x, QP 0x%06x)", r->name,
	      SOURCE_QPN, (long long)seq, src_qp, s.qp->qp_num);
out:
	ud_close(&s);
}

static int run_main(const char *name_a, const char *name_b)
{
	struct ud s = { 0 }, r1 = { 0 }, r2 = { 0 }, r3 = { 0 };
	struct ibv_srq_init_attr srq_attr = { .attr = { .max_wr = RECVS, .max_sge = 1 } };
	uint32_t count, src_qp;
	union ibv_gid unicast;
	struct ibv_ah *ah = NULL;
	int err;

	if (!dev_open(&dev_a, name_a) || !dev_open(&dev_b, name_b))
		return checks_finish();
	r3.srq = ibv_create_srq(dev_b.pd, &srq_attr);
	check(r3.srq != NULL, "r3: create an SRQ: %s", r3.srq ? "ok" : strerror(errno));
	if (!r3.srq || !ud_open(&s, &dev_a, "sender", IBV_QP_CREATE_BLOCK_SELF_MCAST_LB) ||
	    !ud_open(&r1, &dev_b, "r1", 0) || !ud_open(&r2, &dev_b, "r2", 0) ||
	    !ud_open(&r3, &dev_b, "r3", 0))
		goto out;
	unicast = dev_b.gid;
	err = ibv_attach_mcast(r1.qp, &unicast, 0);
	check(err == EINVAL, "attach to a unicast GID: %s (want EINVAL)", strerror(err));
	attach(&s, "");
	attach(&r1, "");
	attach(&r1, " a second time");
	attach(&r2, "");
	attach(&r3, "");
	ah = ibv_create_ah(dev_a.pd, &(struct ibv_ah_attr){ .is_global = 1, .port_num = 1,
			   .grh = { .dgid = group_gid, .hop_limit = 1 } });
	check(ah != NULL, "create the AH of " GROUP ": %s", ah ? "ok" : strerror(errno));
	if (!ah)
		goto out;
	for (uint32_t seq = 0; seq < 4; seq++)
		send_to_group(&s, ah, seq, 0);
	expect_messages(&r1, 0, 4);
	expect_messages(&r2, 0, 4);
	expect_messages(&r3, 0, 4);	/* through its SRQ */
	expect_messages(&s, 0, 0);	/* IBV_QP_CREATE_BLOCK_SELF_MCAST_LB */
	check(!ibv_detach_mcast(r3.qp, &group_gid, 0), "r3: detach");

	err = ibv_destroy_qp(r1.qp);
	check(err == EBUSY, "r1: destroy while attached: %s (want EBUSY)", strerror(err));
	err = ibv_detach_mcast(r1.qp, &group_gid, 0);
	check(!err, "r1: detach: %s", strerror(err));
	err = ibv_detach_mcast(r1.qp, &group_gid, 0);
	check(err == EINVAL, "r1: detach again: %s (want EINVAL)", strerror(err));
	send_to_group(&s, ah, 4, 0);
	expect_messages(&r2, 4, 5);
	expect_messages(&r1, 0, 0);	/* detached: nothing */
	send_to_group(&s, ah, END_SEQ, 5);
	check(receive(&r2, completion_wait_ms, &count, &src_qp) == END_SEQ,
	      "r2: the end message received");
	source_qpn(&r2, ah);
	check(!ibv_detach_mcast(r2.qp, &group_gid, 0) && !ibv_detach_mcast(s.qp, &group_gid, 0),
	      "r2 and the sender detach");
out:
	if (ah)
		ibv_destroy_ah(ah);
	ud_close(&r1);
	ud_close(&r2);
	ud_close(&r3);
	ud_close(&s);
	bufs_free();
	dev_close(&dev_b);
	dev_close(&dev_a);
	return checks_finish();
}

/* Without CAP_NET_RAW a source QPN is refused as uverbs refuses it; the other flag stays. */
static int run_unprivileged(const char *name)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_UD, .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.create_flags = IBV_QP_CREATE_SOURCE_QPN, .source_qpn = SOURCE_QPN,
	};
	struct ibv_qp *qp;
	struct ibv_cq *cq;

	if (!dev_open(&dev_a, name))
		return checks_finish();
	cq = ibv_create_cq(dev_a.ctx, 4, NULL, NULL, 0);
	init.pd = dev_a.pd;
	init.send_cq = init.recv_cq = cq;
	qp = ibv_create_qp_ex(dev_a.ctx, &init);
	check(!qp && errno == EPERM, "a UD QP with a source QPN, no CAP_NET_RAW: %s (want EPERM)",
	      qp ? "created" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	init.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	qp = ibv_create_qp_ex(dev_a.ctx, &init);
	check(qp != NULL, "a UD QP blocking its own multicast, no CAP_NET_RAW: %s",
	      qp ? "created" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	dev_close(&dev_a);
	return checks_finish();
}

/* One QP attached: every message once, up to the end message. */
static int run_member(const char *name)
{
	struct ud m = { 0 };
	uint32_t count, src_qp, got = 0;
	int64_t seq;

	if (!dev_open(&dev_a, name) || !ud_open(&m, &dev_a, "member", 0))
		return checks_finish();
	attach(&m, "");
	printf("ready\n");
	fflush(stdout);
	while ((seq = receive(&m, 10000, &count, &src_qp)) >= 0 && seq != END_SEQ) {
		check(seq == got, "member: message %u received (got %lld)", got, (long long)seq);
		got++;
	}
	check(seq == END_SEQ && count == got, "member: the end message after all %u messages (%u)",
	      count, got);
	check(!ibv_detach_mcast(m.qp, &group_gid, 0), "member: detach");
	ud_close(&m);
	bufs_free();
	dev_close(&dev_a);
	return checks_finish();
}

int main(int argc, char **argv)
{
	uint32_t addr;

	inet_pton(AF_INET, GROUP, &addr);
	group_gid.raw[10] = group_gid.raw[11] = 0xff;	/* ::ffff:239.1.2.3 */
	memcpy(group_gid.raw + 12, &addr, sizeof(addr));
	if (argc == 3 && !strcmp(argv[1], "member"))
		return run_member(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "unprivileged"))
		return run_unprivileged(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "main"))
		return run_main(argv[2], argv[3]);
	fprintf(stderr, "usage: %s member|unprivileged DEVICE | main DEVICE_A DEVICE_B\n", argv[0]);
	return 2;
}
