/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Shared receive queues through the public verbs API: the limits
 * ibv_query_device reports and the errnos of create, modify, query and
 * post (as rdma-core's mlx5 provider returns them); data from several
 * QPs into one SRQ, its WQEs freed out of order through two CQs; the
 * limit event, fired once; QP_LAST_WQE_REACHED when a QP of the SRQ
 * enters ERR, whose posted WQEs stay for the other QPs; ibv_destroy_srq
 * refused (EBUSY) while a QP uses it. The SRQ lives on DEV_B, each of its
 * QPs connected to a QP of its own on DEV_A.
 *
 *   srq DEV_A DEV_B
 *
 * One line per check, then "N passed" and "N failed"; exit 0 when none failed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define WAIT_MS 10000		/* an event later than this counts as missing */
#define QUIET_MS 100		/* how long nothing must happen where nothing may */
#define MSG_LEN 512
#define NQP 3
#define SRQ_WR 8		/* asked; an mlx5 SRQ grants 2^n - 1 >= it */
#define ROUNDS 12		/* of SRQ_WR messages: the ring is reused many times */

static const struct side_spec sender = {
	.cap = { .max_send_wr = 2 * SRQ_WR, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	.send_cqe = 4 * SRQ_WR, .recv_cqe = 4,
	.knobs = QP_KNOBS_DEFAULT,
};

/* QPs on dev_b taking their receives from srq, each connected to a sender on dev_a. */
struct srq_set {
	struct ibv_srq *srq;
	struct ibv_cq *send_cq, *recv_cq[2];	/* QP i completes receives to recv_cq[i % 2] */
	struct ibv_qp *qp[NQP];
	struct side peer[NQP];
	struct buf *mem;			/* receive slots on dev_b, one per SRQ WQE */
	struct buf *out;			/* what the senders send from */
	uint32_t max_wr;
};

static struct ibv_srq *srq_create(uint32_t max_wr, uint32_t max_sge, struct ibv_srq_attr *granted)
{
	struct ibv_srq_init_attr attr = { .attr = { .max_wr = max_wr, .max_sge = max_sge } };
	struct ibv_srq *srq = ibv_create_srq(dev_b.pd, &attr);

	if (!srq)
		check(false, "ibv_create_srq %u x %u: %s", max_wr, max_sge, strerror(errno));
	else if (granted)
		*granted = attr.attr;
	return srq;
}

static struct ibv_qp *srq_qp_create(struct ibv_srq *srq, struct ibv_cq *send_cq,
				    struct ibv_cq *recv_cq, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC, .send_cq = send_cq, .recv_cq = recv_cq, .srq = srq,
		.cap = *cap,
	};
	struct ibv_qp *qp = ibv_create_qp(dev_b.pd, &attr);

	if (!qp)
		check(false, "ibv_create_qp with an SRQ: %s", strerror(errno));
	else
		*cap = attr.cap;
	return qp;
}

static bool set_open(struct srq_set *s)
{
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_send_sge = 1 };
	struct ibv_srq_attr granted;
	int i, ret;

	memset(s, 0, sizeof(*s));
	s->srq = srq_create(SRQ_WR, 1, &granted);
	s->send_cq = ibv_create_cq(dev_b.ctx, 16, NULL, NULL, 0);
	s->recv_cq[0] = ibv_create_cq(dev_b.ctx, 4 * SRQ_WR, NULL, NULL, 0);
	s->recv_cq[1] = ibv_create_cq(dev_b.ctx, 4 * SRQ_WR, NULL, NULL, 0);
	s->mem = buf_new(&dev_b, (size_t)(SRQ_WR * 2) * MSG_LEN, (size_t)(SRQ_WR * 2) * MSG_LEN,
			 IBV_ACCESS_LOCAL_WRITE, 0);
	s->out = buf_new(&dev_a, (size_t)NQP * SRQ_WR * MSG_LEN, (size_t)NQP * SRQ_WR * MSG_LEN,
			 IBV_ACCESS_LOCAL_WRITE, 0);
	if (!s->srq || !s->send_cq || !s->recv_cq[0] || !s->recv_cq[1] || !s->mem || !s->out)
		return false;
	s->max_wr = granted.max_wr;
	for (i = 0; i < NQP; i++) {
		s->qp[i] = srq_qp_create(s->srq, s->send_cq, s->recv_cq[i % 2], &cap);
		if (!s->qp[i] || !side_open(&s->peer[i], &dev_a, &sender))
			return false;
		ret = qp_connect(s->qp[i], s->peer[i].qp->qp_num, &dev_a.gid, PSN_B, PSN_A,
				 &sender.knobs);
		if (!ret)
			ret = qp_connect(s->peer[i].qp, s->qp[i]->qp_num, &dev_b.gid, PSN_A, PSN_B,
					 &sender.knobs);
		if (ret) {
			check(false, "connecting SRQ QP %d: %s", i, strerror(ret));
			return false;
		}
	}
	return true;
}

static void set_close(struct srq_set *s)
{
	int i;

	for (i = 0; i < NQP; i++) {
		if (s->qp[i])
			ibv_destroy_qp(s->qp[i]);
		side_close(&s->peer[i]);
	}
	if (s->srq)
		ibv_destroy_srq(s->srq);
	if (s->send_cq)
		ibv_destroy_cq(s->send_cq);
	if (s->recv_cq[0])
		ibv_destroy_cq(s->recv_cq[0]);
	if (s->recv_cq[1])
		ibv_destroy_cq(s->recv_cq[1]);
	bufs_free();
}

/* Receive slot slot of s->mem as an SRQ WQE with wr_id slot. */
static bool srq_post(struct srq_set *s, uint32_t slot)
{
	struct ibv_sge sge = sge_of(s->mem, (size_t)slot * MSG_LEN, MSG_LEN);
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;
	int ret = ibv_post_srq_recv(s->srq, &wr, &bad);

	if (ret)
		check(false, "ibv_post_srq_recv slot %u: %s", slot, strerror(ret));
	return ret == 0;
}

/* Message seed from sender qp: its first 4 bytes say the seed, the rest is its pattern. */
static bool send_msg(struct srq_set *s, int qp, uint32_t seed)
{
	size_t off = ((size_t)qp * SRQ_WR + seed % SRQ_WR) * MSG_LEN;
	struct ibv_sge sge = sge_of(s->out, off, MSG_LEN);
	struct ibv_send_wr wr = { .wr_id = seed, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int ret;

	fill_pattern(s->out->p + off, MSG_LEN, seed, 0);
	memcpy(s->out->p + off, &seed, sizeof(seed));
	ret = ibv_post_send(s->peer[qp].qp, &wr, &bad);
	if (ret) {
		check(false, "send seed %u: %s", seed, strerror(ret));
		return false;
	}
	if (wait_wc(s->peer[qp].send_cq, &wc) <= 0 || wc.status != IBV_WC_SUCCESS) {
		check(false, "send seed %u did not complete", seed);
		return false;
	}
	return true;
}

/* A receive completion of s: which slot, from which QP, holding whose message. */
static bool check_recv(struct srq_set *s, const struct ibv_wc *wc, const char *what)
{
	const uint8_t *p;
	uint32_t seed;
	int qp;

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV || wc->byte_len != MSG_LEN ||
	    wc->wr_id >= 2 * SRQ_WR) {
		check(false, "%s: wr_id %" PRIu64 " %s opcode %d byte_len %u", what, wc->wr_id,
		      ibv_wc_status_str(wc->status), (int)wc->opcode, wc->byte_len);
		return false;
	}
	p = s->mem->p + wc->wr_id * MSG_LEN;
	memcpy(&seed, p, sizeof(seed));
	qp = (int)(seed / 1000);
	if (qp >= NQP || wc->qp_num != s->qp[qp]->qp_num ||
	    pattern_mismatch(p + sizeof(seed), MSG_LEN - sizeof(seed), seed, sizeof(seed)) <
	    MSG_LEN - sizeof(seed)) {
		check(false, "%s: slot %" PRIu64 " of qp 0x%06x holds seed %u, not its message",
		      what, wc->wr_id, wc->qp_num, seed);
		return false;
	}
	return true;
}

/* ibv_create_srq fails with errno want; a FAIL line says what it did instead. */
static bool create_fails(struct ibv_srq_init_attr *init, int want)
{
	struct ibv_srq *srq;

	errno = 0;
	srq = ibv_create_srq(dev_b.pd, init);
	if (!srq && errno == want)
		return true;
	printf("note: create %u x %u: %s\n", init->attr.max_wr, init->attr.max_sge,
	       srq ? "created" : strerror(errno));
	if (srq)
		ibv_destroy_srq(srq);
	return false;
}

/* ---- checks ---- */

static void check_attributes(void)
{
	struct ibv_device_attr dattr;
	struct ibv_srq_attr granted, attr;
	struct ibv_srq_init_attr_ex ex = {
		.attr = { .max_wr = 5, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_BASIC,
		.pd = dev_b.pd,
	};
	struct ibv_srq_init_attr init;
	struct ibv_srq *srq, *srq_ex;
	uint32_t srq_num = 0;
	int ret;

	ret = ibv_query_device(dev_b.ctx, &dattr);
	check(!ret && dattr.max_srq > 0 && dattr.max_srq_wr == 32767 && dattr.max_srq_sge > 0,
	      "query_device: max_srq %d, max_srq_wr %d, max_srq_sge %d", dattr.max_srq,
	      dattr.max_srq_wr, dattr.max_srq_sge);
	srq = srq_create(100, 2, &granted);
	if (!srq)
		return;
	/* mlx5: 2^n entries, one kept free; the stride rounded up to a power of two. */
	check(granted.max_wr == 127 && granted.max_sge == 3, "create 100 x 2: granted %u x %u (127 x 3)",
	      granted.max_wr, granted.max_sge);
	ret = ibv_query_srq(srq, &attr);
	check(!ret && attr.max_wr == 127 && attr.max_sge == 3 && attr.srq_limit == 0,
	      "query: %u x %u, limit %u", attr.max_wr, attr.max_sge, attr.srq_limit);
	attr = (struct ibv_srq_attr){ .max_wr = 200 };
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
	check(ret == EINVAL, "modify max_wr (no resizing on mlx5) -> EINVAL, got %s", strerror(ret));
	attr = (struct ibv_srq_attr){ .srq_limit = 128 };
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT);
	check(ret == EINVAL, "modify limit 128 of 128 entries -> EINVAL, got %s", strerror(ret));
	attr = (struct ibv_srq_attr){ .srq_limit = 10 };
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT);
	check(ret == 0, "modify limit 10: %s", strerror(ret));
	ret = ibv_query_srq(srq, &attr);
	check(!ret && attr.srq_limit == 10, "query: limit %u armed", attr.srq_limit);
	init = (struct ibv_srq_init_attr){ .attr = { .max_wr = (uint32_t)dattr.max_srq_wr + 1,
						     .max_sge = 1 } };
	check(create_fails(&init, EINVAL), "create past max_srq_wr -> EINVAL");
	init = (struct ibv_srq_init_attr){ .attr = { .max_wr = 4,
						     .max_sge = (uint32_t)dattr.max_srq_sge + 1 } };
	check(create_fails(&init, EINVAL), "create past max_srq_sge -> EINVAL");
	srq_ex = ibv_create_srq_ex(dev_b.ctx, &ex);
	check(srq_ex && ex.attr.max_wr == 7 && ex.attr.max_sge == 3,
	      "create_srq_ex basic 5 x 2: %s, granted %u x %u", srq_ex ? "ok" : strerror(errno),
	      ex.attr.max_wr, ex.attr.max_sge);
	if (srq_ex) {
		ret = ibv_get_srq_num(srq_ex, &srq_num);
		check(ret == 0 && srq_num != 0, "get_srq_num: %s, %u", strerror(ret), srq_num);
		check(ibv_destroy_srq(srq_ex) == 0, "destroy the create_srq_ex SRQ");
	}
	check(ibv_destroy_srq(srq) == 0, "destroy");
}

static void check_post_errors(void)
{
	struct ibv_srq_attr granted;
	struct buf *mem = buf_new(&dev_b, 64, 64, IBV_ACCESS_LOCAL_WRITE, 0);
	struct ibv_srq *srq = srq_create(3, 1, &granted);
	struct ibv_sge sge[2];
	struct ibv_recv_wr wr[5], *bad = NULL;
	int i, ret;

	if (!srq || !mem)
		goto out;
	sge[0] = sge_of(mem, 0, 32);
	sge[1] = sge_of(mem, 32, 32);
	wr[0] = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = sge, .num_sge = 2 };
	ret = ibv_post_srq_recv(srq, &wr[0], &bad);
	check(granted.max_sge == 1 && ret == EINVAL && bad == &wr[0],
	      "post of 2 SGEs into max_sge %u -> EINVAL at that WR, got %s", granted.max_sge,
	      strerror(ret));
	/* max_wr 3 granted: the fourth of a chain finds the SRQ full. */
	for (i = 0; i < 5; i++)
		wr[i] = (struct ibv_recv_wr){ .wr_id = (uint64_t)i, .sg_list = sge, .num_sge = 1,
					      .next = i < 4 ? &wr[i + 1] : NULL };
	ret = ibv_post_srq_recv(srq, &wr[0], &bad);
	check(granted.max_wr == 3 && ret == ENOMEM && bad == &wr[3],
	      "post of 5 into max_wr %u -> ENOMEM at the 4th, got %s at %d", granted.max_wr,
	      strerror(ret), bad ? (int)(bad - wr) : -1);
out:
	if (srq)
		check(ibv_destroy_srq(srq) == 0, "destroy with WQEs posted and no QP");
	bufs_free();
}

/* A QP with an SRQ: its own receive caps ignored, no receive queue, the SRQ in init_attr. */
static void check_srq_qp(void)
{
	struct ibv_cq *cq = ibv_create_cq(dev_b.ctx, 4, NULL, NULL, 0);
	struct ibv_srq *srq = srq_create(4, 1, NULL);
	struct ibv_qp_cap cap = { .max_send_wr = 2, .max_send_sge = 1, .max_recv_wr = 1u << 30,
				  .max_recv_sge = 1000 };
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_recv_wr wr = { .wr_id = 1 }, *bad;
	struct ibv_qp *qp = NULL;
	int ret;

	if (!cq || !srq)
		goto out;
	qp = srq_qp_create(srq, cq, cq, &cap);
	if (!qp)
		goto out;
	check(cap.max_recv_wr == 0 && cap.max_recv_sge == 0,
	      "receive caps past every limit ignored: granted %u x %u", cap.max_recv_wr,
	      cap.max_recv_sge);
	ret = ibv_query_qp(qp, &attr, IBV_QP_CAP, &init);
	check(!ret && init.srq == srq, "query_qp: init_attr.srq is the SRQ");
	ret = ibv_post_recv(qp, &wr, &bad);
	check(ret == ENOMEM, "post_recv on a QP with an SRQ (no RQ) -> ENOMEM, got %s",
	      strerror(ret));
	ret = ibv_destroy_srq(srq);
	check(ret == EBUSY, "destroy_srq while a QP uses it -> EBUSY, got %s", strerror(ret));
	check(ibv_destroy_qp(qp) == 0, "destroy the QP");
	ret = ibv_destroy_srq(srq);
	check(ret == 0, "destroy_srq once no QP uses it: %s", strerror(ret));
	srq = NULL;
out:
	if (srq)
		ibv_destroy_srq(srq);
	if (cq)
		ibv_destroy_cq(cq);
}

/* One receive of a round taken from cq (ms: how long to wait): counted in seen[] by QP, or in *bad. */
static bool take_recv(struct srq_set *s, struct ibv_cq *cq, unsigned int ms, uint32_t *seen,
		      uint32_t *bad)
{
	struct ibv_wc wc;
	int i;

	if ((ms ? wait_wc(cq, &wc) : poll_wc(cq, &wc, 0)) != 1)
		return false;
	if (!check_recv(s, &wc, "shared SRQ receive")) {
		(*bad)++;
		return true;
	}
	for (i = 0; i < NQP; i++)
		if (wc.qp_num == s->qp[i]->qp_num)
			seen[i]++;
	return true;
}

/* Every QP sends into the SRQ; receives polled from two CQs, so WQEs come back out of order. */
static void check_shared_data(void)
{
	struct srq_set s;
	uint32_t round, k, got, bad = 0, seen[NQP] = { 0 };
	int c;

	if (!set_open(&s))
		goto out;
	check(s.max_wr == 15, "SRQ of %u granted %u WQEs", SRQ_WR, s.max_wr);
	for (round = 0; round < ROUNDS; round++) {
		for (k = 0; k < SRQ_WR; k++)
			if (!srq_post(&s, (round % 2) * SRQ_WR + k))
				goto out;
		for (k = 0; k < SRQ_WR; k++)
			if (!send_msg(&s, (int)((round + k) % NQP), ((round + k) % NQP) * 1000 +
				      round * SRQ_WR + k))
				goto out;
		/* The CQ of the odd QPs first: frees reach the SRQ in another order than takes. */
		got = 0;
		for (c = 1; c >= 0; c--)
			while (got < SRQ_WR && take_recv(&s, s.recv_cq[c], 0, seen, &bad))
				got++;
		while (got < SRQ_WR && take_recv(&s, s.recv_cq[0], WAIT_MS, seen, &bad))
			got++;
		if (got != SRQ_WR) {
			check(false, "round %u: %u of %u receives", round, got, SRQ_WR);
			goto out;
		}
	}
	check(bad == 0, "%u messages from %d QPs through one SRQ, each in its slot (%u wrong)",
	      ROUNDS * SRQ_WR, NQP, bad);
	check(seen[0] + seen[1] + seen[2] == ROUNDS * SRQ_WR && seen[0] && seen[1] && seen[2],
	      "every QP delivered (%u, %u, %u)", seen[0], seen[1], seen[2]);
out:
	set_close(&s);
}

static void check_limit_event(void)
{
	struct ibv_srq_attr attr = { .srq_limit = 5 };
	struct srq_set s;
	struct ibv_wc wc;
	uint32_t k;
	int ret;

	if (!set_open(&s))
		goto out;
	for (k = 0; k < 10; k++)
		if (!srq_post(&s, k))
			goto out;
	ret = ibv_modify_srq(s.srq, &attr, IBV_SRQ_LIMIT);
	check(ret == 0, "arm limit 5 with 10 posted: %s", strerror(ret));
	/* 5 taken leaves 5: not below the limit. */
	for (k = 0; k < 5; k++)
		if (!send_msg(&s, 0, k) || wait_wc(s.recv_cq[0], &wc) <= 0)
			goto out;
	check(!wait_event(dev_b.ctx, IBV_EVENT_SRQ_LIMIT_REACHED, s.srq, QUIET_MS),
	      "5 left of limit 5: no event");
	if (!send_msg(&s, 0, 5) || wait_wc(s.recv_cq[0], &wc) <= 0)
		goto out;
	check(wait_event(dev_b.ctx, IBV_EVENT_SRQ_LIMIT_REACHED, s.srq, WAIT_MS),
	      "4 left of limit 5: SRQ_LIMIT_REACHED on the SRQ");
	ret = ibv_query_srq(s.srq, &attr);
	check(!ret && attr.srq_limit == 0, "query after the event: limit %u (disarmed)",
	      attr.srq_limit);
	for (k = 6; k < 9; k++)
		if (!send_msg(&s, 1, 1000 + k) || wait_wc(s.recv_cq[1], &wc) <= 0)
			goto out;
	check(!wait_event(dev_b.ctx, IBV_EVENT_SRQ_LIMIT_REACHED, NULL, QUIET_MS),
	      "fired once: no second event as the SRQ drains further");
out:
	set_close(&s);
}

/* A QP of the SRQ to ERR: LAST_WQE_REACHED; the WQEs it never took stay for the others. */
static void check_last_wqe(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct srq_set s;
	struct ibv_wc wc;
	int ret;

	if (!set_open(&s))
		goto out;
	if (!srq_post(&s, 0) || !srq_post(&s, 1))
		goto out;
	ret = ibv_modify_qp(s.qp[0], &attr, IBV_QP_STATE);
	check(ret == 0, "QP 0 of the SRQ to ERR: %s", strerror(ret));
	check(wait_event(dev_b.ctx, IBV_EVENT_QP_LAST_WQE_REACHED, s.qp[0], WAIT_MS),
	      "QP_LAST_WQE_REACHED on that QP");
	check(poll_wc(s.recv_cq[0], &wc, QUIET_MS) == 0, "no SRQ WQE flushed by its ERR");
	if (send_msg(&s, 1, 1000) && wait_wc(s.recv_cq[1], &wc) > 0)
		check(check_recv(&s, &wc, "QP 1 after QP 0 failed"), "QP 1 still receives from the SRQ");
out:
	set_close(&s);
}

/* An empty SRQ answers RNR NAK; the SEND lands once a WQE is posted (rnr_retry 7: for ever). */
static void check_empty_rnr(void)
{
	struct srq_set s;
	struct ibv_send_wr wr = { .wr_id = 1000, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	uint32_t seed = 1000;

	if (!set_open(&s))
		goto out;
	sge = sge_of(s.out, 0, MSG_LEN);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	fill_pattern(s.out->p, MSG_LEN, seed, 0);
	memcpy(s.out->p, &seed, sizeof(seed));
	if (ibv_post_send(s.peer[1].qp, &wr, &bad)) {
		check(false, "send into the empty SRQ: %s", strerror(errno));
		goto out;
	}
	check(poll_wc(s.peer[1].send_cq, &wc, QUIET_MS) == 0 &&
	      poll_wc(s.recv_cq[1], &wc, 0) == 0, "SEND into an empty SRQ waits (RNR)");
	if (!srq_post(&s, 3))
		goto out;
	check(wait_wc(s.recv_cq[1], &wc) > 0 && check_recv(&s, &wc, "after RNR") && wc.wr_id == 3,
	      "the SEND lands in the WQE posted after the RNR NAK");
	check(wait_wc(s.peer[1].send_cq, &wc) > 0 && wc.status == IBV_WC_SUCCESS,
	      "and the sender completes it successfully");
out:
	set_close(&s);
}

/* Fill the SRQ, deliver all into qp's CQ unpolled, then lose them as mlx5_cq_clean does. */
static bool fill_unpolled(struct srq_set *s, int qp)
{
	uint32_t k;

	for (k = 0; k < s->max_wr; k++)
		if (!srq_post(s, k))
			return false;
	for (k = 0; k < s->max_wr; k++)
		if (!send_msg(s, qp, (uint32_t)qp * 1000 + k))
			return false;
	return true;
}

/* CQEs dropped by RESET or destroy give their WQEs back to the SRQ (__mlx5_cq_clean). */
static void check_clean_frees(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	struct srq_set s;
	uint32_t k;
	int ret;

	if (!set_open(&s) || !fill_unpolled(&s, 0))
		goto out;
	ret = ibv_modify_qp(s.qp[0], &attr, IBV_QP_STATE);
	check(ret == 0, "QP 0 with %u receive CQEs unpolled to RESET: %s", s.max_wr, strerror(ret));
	for (k = 0; k < s.max_wr && srq_post(&s, k); k++)
		;
	check(k == s.max_wr, "after RESET, %u of %u WQEs posted again", k, s.max_wr);
	for (k = 0; k < s.max_wr; k++)
		if (!send_msg(&s, 1, 1000 + k))
			goto out;
	ret = ibv_destroy_qp(s.qp[1]);
	s.qp[1] = NULL;
	check(ret == 0, "QP 1 with %u receive CQEs unpolled destroyed: %s", s.max_wr, strerror(ret));
	for (k = 0; k < s.max_wr && srq_post(&s, k); k++)
		;
	check(k == s.max_wr, "after destroy, %u of %u WQEs posted again", k, s.max_wr);
out:
	set_close(&s);
}

static const struct named_check checks[] = {
	{ "attributes and errnos", check_attributes },
	{ "post errors", check_post_errors },
	{ "QP with an SRQ", check_srq_qp },
	{ "data through a shared SRQ", check_shared_data },
	{ "limit event", check_limit_event },
	{ "empty SRQ: RNR", check_empty_rnr },
	{ "last WQE reached", check_last_wqe },
	{ "CQ clean frees SRQ WQEs", check_clean_frees },
};

int main(int argc, char **argv)
{
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
