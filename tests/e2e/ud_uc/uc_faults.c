/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * UC between two devices whose egress drops and reorders packets (the
 * script sets ROCEMU_FAULTS). Messages of 1 to 8 packets, SEND and RDMA
 * WRITE with immediate, each with its sequence number in its first bytes
 * and a pattern of that number after: every message delivered must be
 * whole and right, none twice, and some must be lost (nothing is sent
 * again). A message after the last is sent until it arrives, so the end
 * is known without waiting out a timeout. Then the local rules: a UC QP
 * refuses READ and atomics in its send ops (EOPNOTSUPP), a READ posted on
 * one completes with a local QP operation error, as on mlx5, and window
 * binds and LOCAL_INV execute on it.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/harness/verbs_pair.h"

#define MESSAGES 1500u
#define MTU 1024u
#define SLOT (8u * MTU)		/* the largest message */
#define RECVS 256u		/* receive WQEs kept posted */
#define SENDS 32u		/* send WQEs outstanding */
#define LAST_SEQ 0xffffffffu	/* the message after the last */
#define END_TRIES 500u		/* of the last message, 10 ms apart */

struct uc_side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static struct uc_side a, b;
static struct buf *src, *dst;

/* Message seq: its length (4 bytes to 8 packets) and bytes. */
static uint32_t msg_len(uint32_t seq)
{
	return 4 + (seq * 2654435761u) % (SLOT - 3);
}

static void msg_fill(uint8_t *p, uint32_t seq)
{
	memcpy(p, &seq, sizeof(seq));
	fill_pattern(p + sizeof(seq), msg_len(seq) - sizeof(seq), seq, 0);
}

static bool uc_open(struct uc_side *s, struct dev *d)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = SENDS + 1, .max_recv_wr = RECVS, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	s->cq = ibv_create_cq(d->ctx, 2 * (SENDS + RECVS), NULL, NULL, 0);
	if (!s->cq) {
		check(false, "%s: create CQ: %s", d->name, strerror(errno));
		return false;
	}
	attr.send_cq = attr.recv_cq = s->cq;
	s->qp = ibv_create_qp(d->pd, &attr);
	if (!s->qp)
		check(false, "%s: create UC QP: %s", d->name, strerror(errno));
	return s->qp != NULL;
}

/* UC through INIT, RTR and RTS: no ACK timeout, retries or READ depths (IBTA 11.2.5.1). */
static int uc_connect(struct ibv_qp *qp, uint32_t remote_qpn, const union ibv_gid *gid,
		      uint32_t sq_psn, uint32_t rq_psn)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS);

	if (ret)
		return ret;
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = remote_qpn,
		.rq_psn = rq_psn,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *gid, .sgid_index = 0, .hop_limit = 64 } },
	};
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
	if (ret)
		return ret;
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = sq_psn };
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static bool uc_pair_open(void)
{
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (!uc_open(&a, &dev_a) || !uc_open(&b, &dev_b))
		return false;
	ret = uc_connect(a.qp, b.qp->qp_num, &dev_b.gid, PSN_A, PSN_B);
	if (!ret)
		ret = uc_connect(b.qp, a.qp->qp_num, &dev_a.gid, PSN_B, PSN_A);
	if (ret)
		check(false, "connect the UC pair: %s", strerror(ret));
	return !ret;
}

static void uc_close(struct uc_side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	memset(s, 0, sizeof(*s));
}

static void uc_pair_close(void)
{
	uc_close(&a);
	uc_close(&b);
	bufs_free();
}

/* Receive WQE i scatters into dst slot i, cleared so no earlier message can pass for a new one. */
static bool recv_post(uint32_t i)
{
	struct ibv_sge sge = sge_of(dst, (size_t)i * SLOT, SLOT);
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(dst->p + (size_t)i * SLOT, UNTOUCHED, SLOT);
	return !ibv_post_recv(b.qp, &wr, &bad);
}

struct tally {
	const char *what;
	bool write;		/* RDMA WRITE with immediate, else SEND */
	uint8_t *seen;		/* per sequence number */
	uint32_t delivered, corrupt, twice, bad_status;
	bool ended;
};

/* Message seq from a, as SEND into a receive WQE or WRITE_WITH_IMM into dst slot seq. */
static bool send_post(const struct tally *t, uint32_t seq)
{
	uint32_t len = seq == LAST_SEQ ? 0 : msg_len(seq), slot = seq % MESSAGES;
	struct ibv_sge sge = sge_of(src, (size_t)slot * SLOT, len);
	struct ibv_send_wr wr = {
		.wr_id = seq, .sg_list = &sge, .num_sge = len ? 1 : 0,
		.opcode = t->write ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(seq),
		.wr.rdma = { .remote_addr = raddr_of(dst, (size_t)RECVS * SLOT + (size_t)slot * SLOT),
			     .rkey = dst->mr->rkey },
	}, *bad;

	return !ibv_post_send(a.qp, &wr, &bad);
}

/* A receive completion: the message it names is whole and right, and new. */
static void receive_check(struct tally *t, const struct ibv_wc *wc)
{
	const uint8_t *p = dst->p + (size_t)wc->wr_id * SLOT;
	uint32_t seq;

	if (wc->status != IBV_WC_SUCCESS) {
		t->bad_status++;
		return;
	}
	if (t->write) {
		seq = be32toh(wc->imm_data);
		p = dst->p + (size_t)RECVS * SLOT + (size_t)(seq % MESSAGES) * SLOT;
	} else {
		memcpy(&seq, p, sizeof(seq));
		if (wc->byte_len == 0)
			seq = LAST_SEQ;
	}
	if (seq == LAST_SEQ) {
		t->ended = wc->byte_len == 0;
		return;
	}
	if (seq >= MESSAGES || wc->byte_len != msg_len(seq) ||
	    (!t->write && memcmp(p, &seq, sizeof(seq))) ||
	    pattern_mismatch(p + sizeof(seq), msg_len(seq) - sizeof(seq), seq, 0) !=
		    msg_len(seq) - sizeof(seq)) {
		t->corrupt++;
		return;
	}
	if (t->seen[seq]++)
		t->twice++;
	t->delivered++;
}

/* Drain both CQs: sends free their slots, receives are checked and posted again. */
static bool cqs_drain(struct tally *t, uint32_t *outstanding)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(a.cq, 1, &wc)) > 0) {
		if (wc.status != IBV_WC_SUCCESS)
			t->bad_status++;
		(*outstanding)--;
	}
	if (n < 0)
		return false;
	while ((n = ibv_poll_cq(b.cq, 1, &wc)) > 0) {
		receive_check(t, &wc);
		if (!recv_post((uint32_t)wc.wr_id))
			return false;
	}
	return n == 0;
}

static void run_lossy(bool write)
{
	struct tally t = { .what = write ? "RDMA WRITE with immediate" : "SEND", .write = write };
	uint32_t seq = 0, outstanding = 0, tries = 0, i;
	struct timespec since;

	src = buf_new(&dev_a, (size_t)MESSAGES * SLOT, (size_t)MESSAGES * SLOT, 0, 0);
	dst = buf_new(&dev_b, (size_t)(RECVS + MESSAGES) * SLOT, (size_t)(RECVS + MESSAGES) * SLOT,
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, UNTOUCHED);
	t.seen = calloc(MESSAGES, 1);
	if (!src || !dst || !t.seen || !uc_pair_open())
		goto out;
	for (i = 0; i < MESSAGES; i++)
		msg_fill(src->p + (size_t)i * SLOT, i);
	for (i = 0; i < RECVS; i++)
		if (!recv_post(i))
			goto broken;
	while (seq < MESSAGES) {
		if (outstanding < SENDS) {
			if (!send_post(&t, seq++))
				goto broken;
			outstanding++;
		}
		if (!cqs_drain(&t, &outstanding))
			goto broken;
		if (outstanding == SENDS)
			usleep(20);	/* leave the CPU to the daemon */
	}
	/* The last message, sent until it arrives: every earlier one has arrived or is lost. */
	while (!t.ended && tries++ < END_TRIES) {
		while (outstanding)
			if (!cqs_drain(&t, &outstanding))
				goto broken;
		if (!send_post(&t, LAST_SEQ))
			goto broken;
		outstanding++;
		clock_gettime(CLOCK_MONOTONIC, &since);
		while (!t.ended && elapsed_ms(&since) < 10)
			if (!cqs_drain(&t, &outstanding))
				goto broken;
	}
	check(t.ended, "%s: the end arrived (%u tries)", t.what, tries);
	check(t.corrupt == 0, "%s: %u of %u delivered messages corrupt", t.what, t.corrupt,
	      t.delivered + t.corrupt);
	check(t.twice == 0, "%s: %u messages delivered twice", t.what, t.twice);
	check(t.bad_status == 0, "%s: %u completions in error", t.what, t.bad_status);
	check(t.delivered < MESSAGES && t.delivered > MESSAGES / 2,
	      "%s: %u of %u messages delivered whole, the rest lost", t.what, t.delivered,
	      MESSAGES);
	goto out;
broken:
	check(false, "%s: posting or polling failed: %s", t.what, strerror(errno));
out:
	free(t.seen);
	uc_pair_close();
}

static void check_send_lossy(void)
{
	run_lossy(false);
}

static void check_write_imm_lossy(void)
{
	run_lossy(true);
}

/* READ and atomics: refused as send ops of a UC QP, and failed when posted (mlx5 posts them). */
static void check_no_read(void)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_UC, .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 },
		.pd = dev_a.pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ,
	};
	struct ibv_send_wr wr = { .wr_id = 7, .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp *qp;
	struct ibv_wc wc;

	if (!uc_pair_open())
		goto out;
	attr.send_cq = attr.recv_cq = a.cq;
	errno = 0;
	qp = ibv_create_qp_ex(dev_a.ctx, &attr);
	check(!qp && errno == EOPNOTSUPP, "UC QP with READ in its send ops: %s",
	      qp ? "created" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	attr.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	qp = ibv_create_qp_ex(dev_a.ctx, &attr);
	check(qp != NULL, "UC QP with SEND and WRITE_WITH_IMM send ops: %s",
	      qp ? "created" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	check(!ibv_post_send(a.qp, &wr, &bad), "READ posted on a UC QP");
	if (poll_wc(a.cq, &wc, 2000) == 1)
		check(wc.wr_id == 7 && wc.status == IBV_WC_LOC_QP_OP_ERR,
		      "READ on UC completes with %s", ibv_wc_status_str(wc.status));
	else
		check(false, "READ on UC: no completion");
out:
	uc_pair_close();
}

/* Post wr on qp and take its completion: true when it completes as want. */
static bool local_op(struct uc_side *s, struct ibv_send_wr *wr, enum ibv_wc_opcode want,
		     const char *what)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	if (ibv_post_send(s->qp, wr, &bad)) {
		check(false, "%s: post: %s", what, strerror(errno));
		return false;
	}
	if (poll_wc(s->cq, &wc, 2000) != 1) {
		check(false, "%s: no completion", what);
		return false;
	}
	check(wc.wr_id == wr->wr_id && wc.status == IBV_WC_SUCCESS && wc.opcode == want,
	      "%s: %s", what, ibv_wc_status_str(wc.status));
	return wc.status == IBV_WC_SUCCESS;
}

/* A type 2 window bound through a UC QP, then invalidated through it: local WQEs, in order. */
static void check_local_ops(void)
{
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_mw *mw = NULL;

	dst = buf_new(&dev_b, 4096, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					      IBV_ACCESS_MW_BIND, UNTOUCHED);
	if (!dst || !uc_pair_open())
		goto out;
	mw = ibv_alloc_mw(dev_b.pd, IBV_MW_TYPE_2);
	if (!mw) {
		check(false, "ibv_alloc_mw: %s", strerror(errno));
		goto out;
	}
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = dst->mr, .addr = raddr_of(dst, 0), .length = 4096,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	if (!local_op(&b, &wr, IBV_WC_BIND_MW, "window bound through a UC QP"))
		goto out;
	wr = (struct ibv_send_wr){ .wr_id = 2, .opcode = IBV_WR_LOCAL_INV,
				   .send_flags = IBV_SEND_SIGNALED,
				   .invalidate_rkey = ibv_inc_rkey(mw->rkey) };
	local_op(&b, &wr, IBV_WC_LOCAL_INV, "window invalidated through a UC QP");
out:
	if (mw)
		ibv_dealloc_mw(mw);
	uc_pair_close();
}

static const struct named_check checks[] = {
	{ "SEND under drop and reorder", check_send_lossy },
	{ "RDMA WRITE with immediate under drop and reorder", check_write_imm_lossy },
	{ "READ and atomics on UC", check_no_read },
	{ "LOCAL_INV and window binds on UC", check_local_ops },
};

int main(int argc, char **argv)
{
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
