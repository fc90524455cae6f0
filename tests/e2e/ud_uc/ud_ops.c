/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * UD QPs and address handles through the public verbs API, QP "a" on
 * device A and "b" on device B: the GRH a receive holds (20 zero bytes,
 * then the IPv4 header of the datagram) and the completion's fields; an
 * AH made from that completion carries the answer back; a datagram with
 * the wrong Q_Key is dropped (the script reads the counter) and one with
 * the privileged bit takes the QP's Q_Key; a message over the port MTU
 * fails with a local length error; the ibv_qp_ex UD builders; a UD QP on
 * an SRQ (ibv_create_qp_ex and mlx5dv_create_qp): its receives, the limit
 * event, a datagram dropped on an empty SRQ (the script reads the
 * counter), QP_LAST_WQE_REACHED in ERR.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/ip.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/mlx5dv.h>
#include "tests/e2e/harness/verbs_pair.h"

#define QKEY 0x11110000u
#define PRIVILEGED_QKEY 0x80000000u
#define GRH_BYTES 40
#define MSG 100
#define IMM 0x12345678u
#define SILENCE_MS 300		/* a dropped datagram gives no completion in this long */

struct ud {
	struct dev *dev;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct buf *buf;	/* [0, 8192): receives, [8192, 16384): sends */
};

static struct ud a, b;

/* How a UD QP is made: its receive queue, or an SRQ through verbs or mlx5dv. */
struct ud_how {
	bool qp_ex;			/* with every ibv_qp_ex UD send op */
	struct ibv_srq *srq;		/* receives through it, not an RQ of its own */
	bool dv;			/* made by mlx5dv_create_qp */
};

static bool ud_open_how(struct ud *u, struct dev *d, const struct ud_how *how)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_UD, .cap = { .max_send_wr = 16, .max_recv_wr = 16,
						.max_send_sge = 1, .max_recv_sge = 1 },
		.pd = d->pd, .comp_mask = IBV_QP_INIT_ATTR_PD, .srq = how->srq,
	};
	struct mlx5dv_qp_init_attr dv = { 0 };
	bool qp_ex = how->qp_ex;
	int err;

	u->dev = d;
	u->cq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
	u->buf = buf_new(d, 16384, 16384, IBV_ACCESS_LOCAL_WRITE, 0);
	if (!u->cq || !u->buf) {
		check(false, "%s: CQ and buffer", d->name);
		return false;
	}
	init.send_cq = init.recv_cq = u->cq;
	if (qp_ex) {
		init.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		init.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	}
	u->qp = how->dv ? mlx5dv_create_qp(d->ctx, &init, &dv) : ibv_create_qp_ex(d->ctx, &init);
	check(u->qp != NULL, "%s: create a UD QP%s%s%s: %s", d->name, qp_ex ? " with ibv_qp_ex" : "",
	      how->srq ? " on an SRQ" : "", how->dv ? " by mlx5dv_create_qp" : "",
	      u->qp ? "ok" : strerror(errno));
	if (!u->qp)
		return false;
	err = ud_to_rts(u->qp, QKEY, 0x42);
	check(!err, "%s: UD QP 0x%06x to RTS with Q_Key 0x%x: %s", d->name, u->qp->qp_num, QKEY,
	      strerror(err));
	return !err;
}

static bool ud_open(struct ud *u, struct dev *d, bool qp_ex)
{
	const struct ud_how how = { .qp_ex = qp_ex };

	return ud_open_how(u, d, &how);
}

static void ud_close(struct ud *u)
{
	if (u->qp)
		ibv_destroy_qp(u->qp);
	if (u->cq)
		ibv_destroy_cq(u->cq);
	memset(u, 0, sizeof(*u));
}

static bool both_open(bool qp_ex)
{
	return ud_open(&a, &dev_a, qp_ex) && ud_open(&b, &dev_b, qp_ex);
}

static void both_close(void)
{
	ud_close(&a);
	ud_close(&b);
	bufs_free();
}

/* The AH of an IPv4-mapped GID, as ibv_ud_pingpong makes it. */
static struct ibv_ah *ah_to(struct dev *from, const union ibv_gid *gid)
{
	struct ibv_ah_attr attr = { .is_global = 1, .port_num = 1,
				    .grh = { .dgid = *gid, .sgid_index = 0, .hop_limit = 1 } };
	struct ibv_ah *ah = ibv_create_ah(from->pd, &attr);

	check(ah != NULL, "%s: create_ah: %s", from->name, ah ? "ok" : strerror(errno));
	return ah;
}

static bool post_recv_of(struct ud *u, uint64_t wr_id, size_t len)
{
	struct ibv_sge sge = sge_of(u->buf, 0, len);
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };

	memset(u->buf->p, UNTOUCHED, len + 64);	/* and the bytes just past it */
	return post_recv(u->qp, &wr, "post a UD receive");
}

static bool post_ud_send(struct ud *u, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey,
			 uint64_t wr_id, size_t len, enum ibv_wr_opcode opcode)
{
	struct ibv_sge sge = sge_of(u->buf, 8192, len);
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(IMM),
		.wr = { .ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = qkey } },
	};

	fill_pattern(u->buf->p + 8192, len, (unsigned int)wr_id, 0);
	return post_send(u->qp, &wr, "post a UD send");
}

/* No completion on cq for SILENCE_MS. */
static void expect_silence(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;
	int got = poll_wc(cq, &wc, SILENCE_MS);

	check(got == 0, "%s: no completion (got %d, status %s)", what, got,
	      got > 0 ? ibv_wc_status_str(wc.status) : "-");
}

static uint16_t ip_checksum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The GRH of a receive from a to b: zeros, then the datagram's IPv4 header. */
static void check_grh(const uint8_t *grh, size_t paylen)
{
	struct iphdr ip;

	memcpy(&ip, grh + 20, sizeof(ip));
	check(all_bytes(grh, 20, 0), "GRH: the first 20 bytes are zero");
	check(ip.version == 4 && ip.ihl == 5 && ip.protocol == IPPROTO_UDP,
	      "GRH: an IPv4 header of a UDP datagram (version %u ihl %u protocol %u)", ip.version,
	      ip.ihl, ip.protocol);
	check(!memcmp(&ip.saddr, dev_a.gid.raw + 12, 4) && !memcmp(&ip.daddr, dev_b.gid.raw + 12, 4),
	      "GRH: from A's address to B's");
	/* IP, UDP, BTH, DETH, ImmDt, payload, ICRC */
	check(ntohs(ip.tot_len) == 20 + 8 + 12 + 8 + 4 + paylen + 4,
	      "GRH: total length %u for %zu bytes of payload", ntohs(ip.tot_len), paylen);
	check(ip_checksum(grh + 20, 20) == 0, "GRH: IPv4 header checksum valid");
}

static void check_grh_and_ah_from_wc(void)
{
	struct ibv_ah *ah = NULL, *back = NULL;
	struct ibv_ah_attr attr;
	struct ibv_wc wc;
	int err;

	if (!both_open(false) || !(ah = ah_to(&dev_a, &dev_b.gid)))
		goto out;
	post_recv_of(&b, 1, GRH_BYTES + MSG);
	post_ud_send(&a, ah, b.qp->qp_num, QKEY, 2, MSG, IBV_WR_SEND_WITH_IMM);
	expect_wc(a.cq, "A: the send completes", (struct want){ 2, IBV_WC_SUCCESS, IBV_WC_SEND, -1 },
		  NULL);
	if (!expect_wc(b.cq, "B: the receive completes",
		       (struct want){ 1, IBV_WC_SUCCESS, IBV_WC_RECV, GRH_BYTES + MSG }, &wc))
		goto out;
	check((wc.wc_flags & IBV_WC_GRH) && (wc.wc_flags & IBV_WC_WITH_IMM) &&
	      ntohl(wc.imm_data) == IMM, "B: IBV_WC_GRH, immediate 0x%x", ntohl(wc.imm_data));
	check(wc.src_qp == a.qp->qp_num && wc.qp_num == b.qp->qp_num && wc.pkey_index == 0,
	      "B: src_qp 0x%06x (A's), qp_num 0x%06x, pkey_index %u", wc.src_qp, wc.qp_num,
	      wc.pkey_index);
	/* A ConnectX's SL over RoCE is the packet type: UDP (0x8) | IPv4 (0x2); UCX reads it. */
	check(wc.sl == 0xa, "B: sl 0x%x is RoCE v2 over IPv4 (0xa)", wc.sl);
	check_grh(b.buf->p, MSG);
	check_pattern(b.buf->p + GRH_BYTES, MSG, 2, 0, "B: the payload after the GRH");
	check_untouched(b.buf->p + GRH_BYTES + MSG, 64, UNTOUCHED, "B: past the message");

	err = ibv_init_ah_from_wc(dev_b.ctx, 1, &wc, (struct ibv_grh *)b.buf->p, &attr);
	check(!err && attr.is_global && attr.port_num == 1 && attr.grh.sgid_index == 0 &&
	      !memcmp(attr.grh.dgid.raw, dev_a.gid.raw, 16),
	      "init_ah_from_wc: global, through GID 0, to A's GID: %s", strerror(err));
	back = ibv_create_ah_from_wc(dev_b.pd, &wc, (struct ibv_grh *)b.buf->p, 1);
	check(back != NULL, "create_ah_from_wc: %s", back ? "ok" : strerror(errno));
	if (!back)
		goto out;
	post_recv_of(&a, 3, GRH_BYTES + MSG);
	post_ud_send(&b, back, wc.src_qp, QKEY, 4, MSG, IBV_WR_SEND);
	expect_wc(b.cq, "B: the answer is sent", (struct want){ 4, IBV_WC_SUCCESS, IBV_WC_SEND, -1 },
		  NULL);
	if (expect_wc(a.cq, "A: the answer through the AH from the completion arrives",
		      (struct want){ 3, IBV_WC_SUCCESS, IBV_WC_RECV, GRH_BYTES + MSG }, &wc)) {
		check(wc.src_qp == b.qp->qp_num && !(wc.wc_flags & IBV_WC_WITH_IMM),
		      "A: src_qp 0x%06x (B's), no immediate", wc.src_qp);
		check_pattern(a.buf->p + GRH_BYTES, MSG, 4, 0, "A: the answer's payload");
	}
out:
	if (back)
		check(ibv_destroy_ah(back) == 0, "destroy the AH from the completion");
	if (ah)
		check(ibv_destroy_ah(ah) == 0, "destroy_ah");
	both_close();
}

/* One datagram with a wrong Q_Key (the script expects rx_qkey_violations 1 on B). */
static void check_qkey(void)
{
	struct ibv_ah *ah = NULL;

	if (!both_open(false) || !(ah = ah_to(&dev_a, &dev_b.gid)))
		goto out;
	post_recv_of(&b, 1, GRH_BYTES + MSG);
	post_ud_send(&a, ah, b.qp->qp_num, QKEY ^ 1, 2, MSG, IBV_WR_SEND);
	expect_wc(a.cq, "A: a send with the wrong Q_Key completes (UD has no ACK)",
		  (struct want){ 2, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
	expect_silence(b.cq, "B: the datagram with the wrong Q_Key is dropped");
	/* IBTA 10.2.4: the high bit set takes the sending QP's own Q_Key (QKEY here). */
	post_ud_send(&a, ah, b.qp->qp_num, PRIVILEGED_QKEY, 3, MSG, IBV_WR_SEND);
	expect_wc(a.cq, "A: a send with the privileged Q_Key",
		  (struct want){ 3, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
	if (expect_wc(b.cq, "B: it arrives with the QP's Q_Key",
		      (struct want){ 1, IBV_WC_SUCCESS, IBV_WC_RECV, GRH_BYTES + MSG }, NULL))
		check_pattern(b.buf->p + GRH_BYTES, MSG, 3, 0, "B: its payload, not the dropped one's");
out:
	if (ah)
		ibv_destroy_ah(ah);
	both_close();
}

/* A message of the port MTU goes; one byte more fails as on mlx5, with the QP. */
static void check_mtu(void)
{
	struct ibv_port_attr port;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_ah *ah = NULL;
	size_t mtu;

	if (!both_open(false) || !(ah = ah_to(&dev_a, &dev_b.gid)))
		goto out;
	if (ibv_query_port(dev_a.ctx, 1, &port)) {
		check(false, "query_port: %s", strerror(errno));
		goto out;
	}
	mtu = 128u << port.active_mtu;
	post_recv_of(&b, 1, GRH_BYTES + mtu);
	post_ud_send(&a, ah, b.qp->qp_num, QKEY, 2, mtu, IBV_WR_SEND);
	expect_wc(a.cq, "A: a send of the port MTU", (struct want){ 2, IBV_WC_SUCCESS, IBV_WC_SEND, -1 },
		  NULL);
	if (expect_wc(b.cq, "B: it arrives whole",
		      (struct want){ 1, IBV_WC_SUCCESS, IBV_WC_RECV, (long)(GRH_BYTES + mtu) }, NULL))
		check_pattern(b.buf->p + GRH_BYTES, mtu, 2, 0, "B: its payload");
	post_ud_send(&a, ah, b.qp->qp_num, QKEY, 3, mtu + 1, IBV_WR_SEND);
	expect_wc(a.cq, "A: a send of MTU + 1 bytes fails", (struct want){ 3, IBV_WC_LOC_LEN_ERR, -1, -1 },
		  NULL);
	check(!ibv_query_qp(a.qp, &attr, IBV_QP_STATE, &init) && attr.qp_state == IBV_QPS_ERR,
	      "A: the QP is in ERR after the error completion");
	expect_silence(b.cq, "B: nothing of it arrives");
out:
	if (ah)
		ibv_destroy_ah(ah);
	both_close();
}

/* ibv_wr_send_imm with ibv_wr_set_ud_addr, then an ibv_wr_send without an address. */
static void check_qp_ex(void)
{
	struct ibv_ah *ah = NULL;
	struct ibv_qp_ex *qpx;
	struct ibv_wc wc;
	int err;

	if (!both_open(true) || !(ah = ah_to(&dev_a, &dev_b.gid)))
		goto out;
	qpx = ibv_qp_to_qp_ex(a.qp);
	post_recv_of(&b, 1, GRH_BYTES + MSG);
	fill_pattern(a.buf->p + 8192, MSG, 5, 0);
	ibv_wr_start(qpx);
	qpx->wr_id = 5;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(qpx, htonl(IMM));
	ibv_wr_set_ud_addr(qpx, ah, b.qp->qp_num, QKEY);
	ibv_wr_set_sge(qpx, a.buf->mr->lkey, (uintptr_t)a.buf->p + 8192, MSG);
	err = ibv_wr_complete(qpx);
	check(!err, "A: wr_send_imm with wr_set_ud_addr: %s", strerror(err));
	expect_wc(a.cq, "A: it completes", (struct want){ 5, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
	if (expect_wc(b.cq, "B: it arrives", (struct want){ 1, IBV_WC_SUCCESS, IBV_WC_RECV,
							    GRH_BYTES + MSG }, &wc)) {
		check(wc.src_qp == a.qp->qp_num && ntohl(wc.imm_data) == IMM,
		      "B: from A's QP with the immediate");
		check_pattern(b.buf->p + GRH_BYTES, MSG, 5, 0, "B: its payload");
	}
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, a.buf->mr->lkey, (uintptr_t)a.buf->p + 8192, MSG);
	err = ibv_wr_complete(qpx);
	check(err == EINVAL, "A: a UD send without wr_set_ud_addr -> EINVAL (got %s)", strerror(err));
out:
	if (ah)
		ibv_destroy_ah(ah);
	both_close();
}

#define SRQ_WRS 8
#define SRQ_LIMIT 2
#define SRQ_SLOT 2048		/* each SRQ receive's place in B's receive half */

/* An SRQ receive of GRH_BYTES + MSG bytes into slot i of u's buffer. */
static bool post_srq_recv_at(struct ud *u, struct ibv_srq *srq, unsigned int i)
{
	struct ibv_sge sge = sge_of(u->buf, i * SRQ_SLOT, GRH_BYTES + MSG);
	struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge, .num_sge = 1 }, *bad;
	int err;

	memset(u->buf->p + i * SRQ_SLOT, UNTOUCHED, GRH_BYTES + MSG + 64);
	err = ibv_post_srq_recv(srq, &wr, &bad);
	check(!err, "B: post SRQ receive %u: %s", i, strerror(err));
	return !err;
}

/*
 * B's UD QP receives through an SRQ (made as how says): the completions
 * name the SRQ's WRs, with the GRH and payload in their buffers; the limit
 * event fires once fewer than SRQ_LIMIT are left; a datagram finding the
 * SRQ empty is dropped (the script expects one out_of_buffer on B) and the
 * QP receives on; in ERR it reports its last WQE reached.
 */
static void ud_through_srq(bool dv)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = SRQ_WRS, .max_sge = 1 } };
	struct ibv_srq_attr limit = { .srq_limit = SRQ_LIMIT };
	struct ibv_qp_attr err_attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_ah *ah = NULL;
	struct ibv_srq *srq;
	struct ud_how how;
	struct ibv_wc wc;
	unsigned int i;

	srq = ibv_create_srq(dev_b.pd, &sattr);
	check(srq != NULL, "B: create an SRQ: %s", srq ? "ok" : strerror(errno));
	how = (struct ud_how){ .srq = srq, .dv = dv };
	if (!srq || !ud_open(&a, &dev_a, false) || !ud_open_how(&b, &dev_b, &how) ||
	    !(ah = ah_to(&dev_a, &dev_b.gid)))
		goto out;
	for (i = 0; i < 3; i++)
		post_srq_recv_at(&b, srq, i);
	check(!ibv_modify_srq(srq, &limit, IBV_SRQ_LIMIT), "B: arm the SRQ's limit at %u", SRQ_LIMIT);
	for (i = 0; i < 3; i++) {
		post_ud_send(&a, ah, b.qp->qp_num, QKEY, 10 + i, MSG, IBV_WR_SEND_WITH_IMM);
		expect_wc(a.cq, "A: the send completes",
			  (struct want){ 10 + i, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
		if (!expect_wc(b.cq, "B: the SRQ's receive completes, in order",
			       (struct want){ 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV, GRH_BYTES + MSG },
			       &wc))
			goto out;
		check(wc.src_qp == a.qp->qp_num && wc.qp_num == b.qp->qp_num &&
		      (wc.wc_flags & IBV_WC_GRH) && ntohl(wc.imm_data) == IMM,
		      "B: from A's QP 0x%06x to B's 0x%06x, GRH, immediate 0x%x", wc.src_qp, wc.qp_num,
		      ntohl(wc.imm_data));
		check_grh(b.buf->p + i * SRQ_SLOT, MSG);
		check_pattern(b.buf->p + i * SRQ_SLOT + GRH_BYTES, MSG, 10 + i, 0,
			      "B: the payload after the GRH");
		check_untouched(b.buf->p + i * SRQ_SLOT + GRH_BYTES + MSG, 64, UNTOUCHED,
				"B: past the message");
		if (i == 1)
			check(wait_event(dev_b.ctx, IBV_EVENT_SRQ_LIMIT_REACHED, srq, 2000),
			      "B: SRQ_LIMIT_REACHED once 1 WR is left");
	}
	post_ud_send(&a, ah, b.qp->qp_num, QKEY, 13, MSG, IBV_WR_SEND);
	expect_wc(a.cq, "A: a send to the empty SRQ completes (UD has no RNR)",
		  (struct want){ 13, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
	expect_silence(b.cq, "B: the datagram finding the SRQ empty is dropped");
	post_srq_recv_at(&b, srq, 3);
	post_ud_send(&a, ah, b.qp->qp_num, QKEY, 14, MSG, IBV_WR_SEND);
	expect_wc(a.cq, "A: the next send completes",
		  (struct want){ 14, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
	if (expect_wc(b.cq, "B: it arrives in the WR posted since",
		      (struct want){ 103, IBV_WC_SUCCESS, IBV_WC_RECV, GRH_BYTES + MSG }, NULL))
		check_pattern(b.buf->p + 3 * SRQ_SLOT + GRH_BYTES, MSG, 14, 0, "B: its payload");
	check(!ibv_modify_qp(b.qp, &err_attr, IBV_QP_STATE), "B: the QP to ERR");
	check(wait_event(dev_b.ctx, IBV_EVENT_QP_LAST_WQE_REACHED, b.qp, 2000),
	      "B: QP_LAST_WQE_REACHED");
	expect_silence(b.cq, "B: the SRQ's WRs are not flushed with the QP");
out:
	if (ah)
		ibv_destroy_ah(ah);
	ud_close(&b);
	check(!srq || !ibv_destroy_srq(srq), "B: destroy the SRQ once its QP is gone");
	ud_close(&a);
	bufs_free();
}

static void check_srq(void)
{
	ud_through_srq(false);
}

static void check_srq_dv(void)
{
	ud_through_srq(true);
}

/* What a RoCE port cannot route, and what UD cannot post. */
static void check_refusals(void)
{
	struct ibv_ah_attr local = { .is_global = 0, .port_num = 1 };
	struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE }, *bad = NULL;
	struct ibv_ah *ah = NULL;
	int err;

	errno = 0;
	check(ibv_create_ah(dev_a.pd, &local) == NULL && errno == EINVAL,
	      "create_ah without a GRH -> EINVAL (%s)", strerror(errno));
	if (!both_open(false) || !(ah = ah_to(&dev_a, &dev_b.gid)))
		goto out;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = b.qp->qp_num;
	err = ibv_post_send(a.qp, &wr, &bad);
	check(err == EINVAL && bad == &wr, "RDMA WRITE on a UD QP -> EINVAL (%s)", strerror(err));
out:
	if (ah)
		ibv_destroy_ah(ah);
	both_close();
}

static const struct named_check checks[] = {
	{ "GRH bytes and the AH from the completion", check_grh_and_ah_from_wc },
	{ "Q_Key mismatch dropped, privileged Q_Key", check_qkey },
	{ "messages up to the port MTU", check_mtu },
	{ "ibv_qp_ex UD builders", check_qp_ex },
	{ "UD through an SRQ (ibv_create_qp_ex)", check_srq },
	{ "UD through an SRQ (mlx5dv_create_qp)", check_srq_dv },
	{ "refusals", check_refusals },
};

int main(int argc, char **argv)
{
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
