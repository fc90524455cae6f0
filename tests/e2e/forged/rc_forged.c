/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Forged RoCEv2 packets against live RC QPs, sent from a UDP socket of
 * this program with a correct ICRC, as any host on the network could:
 *
 * - READ responses that do not fit the READ in flight (more than the path
 *   MTU, ending it early, a MIDDLE first, a NAK or an atomic acknowledge
 *   in their place, PSNs outside what was sent) are dropped and counted
 *   (rx_bad_responses, rx_ghost_acks); the READ then completes with the
 *   responder's data;
 * - ACKs and NAKs outside the PSNs in flight (stale ones behind the oldest
 *   unacknowledged PSN, random ones, ones ahead of what was sent) are
 *   ignored and counted, with and without a WRITE in flight;
 * - a duplicate READ request is answered only when a new one would be:
 *   not without REMOTE_READ, not without responder resources, not for
 *   more than lies before the expected PSN (the responder's peer is this
 *   program, so it sees what the QP answers).
 *
 * Throughout, the daemon answers `rocemu status` and the
 * requester QPs stay in RTS and keep moving data.
 *
 *   rc_forged DEVICE_A DEVICE_B ROCEMU PEER_ADDR
 *       ROCEMU: the CLI; PEER_ADDR: a free loopback address for the fake peer.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/harness/forge.h"
#include "net/udp/udp_port.h"
#include "tests/e2e/harness/verbs_pair.h"

#define MTU 1024		/* IBV_MTU_1024, as qp_connect sets it */
#define READ_PKTS 4
#define READ_LEN (READ_PKTS * MTU)
#define ROUND_LEN 256
#define TIMEOUT_537MS 17	/* 4.096 us * 2^17: time to forge before the requester resends */
/* 4.096 us * 2^19 = 2.1 s, 17 s for 7 retries: far more than forging every bad response takes, sanitized or not */
#define TIMEOUT_2S 19
#define FAKE_PEER_QPN 0x00abcd
#define RANDOM_NAKS 64
/* AETH syndromes (IBTA 9.7.5): type in bits 7:5, then credits, RNR timer or NAK code. */
#define SYN_ACK (ROCEMU_AETH_ACK << 5 | ROCEMU_AETH_CREDITS_INVALID)
#define SYN_RNR(timer) (ROCEMU_AETH_RNR_NAK << 5 | (timer))
#define SYN_NAK(code) (ROCEMU_AETH_NAK << 5 | (code))
#define SYN_RESERVED_TYPE (2 << 5)
#define NAK_RESERVED_CODE 9

static uint32_t peer_addr;	/* network order */
static uint8_t pkt[FORGE_MAX];

/* A counter of `rocemu stats`; the check fails when it is missing (the checks go on). */
static long long counter(const struct dev *d, const char *name)
{
	return cli_stat(d->name, name);
}

/* WRITE ROUND_LEN bytes of pattern seed from a to b, READ them back: both complete, data intact. */
static void write_then_read(struct pair *p, unsigned int seed, const char *what)
{
	int rights = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct buf *src = buf_new(&dev_a, ROUND_LEN, ROUND_LEN, IBV_ACCESS_LOCAL_WRITE, 0);
	struct buf *dst = buf_new(&dev_b, ROUND_LEN, ROUND_LEN, rights, UNTOUCHED);
	struct buf *back = buf_new(&dev_a, ROUND_LEN, ROUND_LEN, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	struct ibv_sge sge;
	struct ibv_send_wr wr;

	if (!src || !dst || !back)
		return;
	fill_pattern(src->p, ROUND_LEN, seed, 0);
	sge = sge_of(src, 0, ROUND_LEN);
	wr = (struct ibv_send_wr){
		.wr_id = 0x10, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr_of(dst, 0), .rkey = dst->mr->rkey },
	};
	if (!post_send(p->a.qp, &wr, what) ||
	    !expect_wc(p->a.send_cq, what, (struct want){ 0x10, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL))
		return;
	sge = sge_of(back, 0, ROUND_LEN);
	wr.wr_id = 0x11;
	wr.opcode = IBV_WR_RDMA_READ;
	if (!post_send(p->a.qp, &wr, what) ||
	    !expect_wc(p->a.send_cq, what, (struct want){ 0x11, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, ROUND_LEN }, NULL))
		return;
	check_pattern(back->p, ROUND_LEN, seed, 0, what);
}

/* What a check opened, closed; faults_on: B's egress still drops everything. */
static void check_close(struct forge *f, struct pair *p, bool faults_on)
{
	if (faults_on)
		cli_fault(dev_b.name, "off");
	forge_close(f);
	bufs_free();
	pair_close(p);
}

/* ---- READ responses that do not fit the READ ---- */

struct forged_resp {
	const char *what;	/* the READ response forged */
	uint8_t opcode;
	int32_t psn_off;	/* from the READ's first PSN */
	uint32_t paylen;
	uint8_t syndrome;	/* of the AETH, where the opcode has one */
	bool ghost;		/* outside the PSNs sent: rx_ghost_acks, else rx_bad_responses */
};

static const struct forged_resp bad_read_responses[] = {
	{ "an ONLY with the whole READ (4 MTUs) in one packet", ROCEMU_OP_RC_RDMA_READ_RESPONSE_ONLY,
	  0, READ_LEN, SYN_ACK, false },
	{ "an ONLY with twice the READ", ROCEMU_OP_RC_RDMA_READ_RESPONSE_ONLY, 0, 2 * READ_LEN,
	  SYN_ACK, false },
	{ "a FIRST with 2 MTUs", ROCEMU_OP_RC_RDMA_READ_RESPONSE_FIRST, 0, 2 * MTU, SYN_ACK,
	  false },
	{ "a LAST at the first PSN", ROCEMU_OP_RC_RDMA_READ_RESPONSE_LAST, 0, MTU, SYN_ACK,
	  false },
	{ "a MIDDLE at the first PSN", ROCEMU_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 0, MTU, 0, false },
	{ "a FIRST carrying a NAK", ROCEMU_OP_RC_RDMA_READ_RESPONSE_FIRST, 0, MTU,
	  SYN_NAK(ROCEMU_NAK_REMOTE_ACCESS_ERROR), false },
	{ "an atomic acknowledge in its place", ROCEMU_OP_RC_ATOMIC_ACKNOWLEDGE, 0, 0, SYN_ACK, false },
	{ "an ACK of a reserved syndrome type", ROCEMU_OP_RC_ACKNOWLEDGE, 0, 0, SYN_RESERVED_TYPE, false },
	{ "a NAK of a reserved code", ROCEMU_OP_RC_ACKNOWLEDGE, 0, 0, SYN_NAK(NAK_RESERVED_CODE), false },
	{ "a LAST one PSN past the READ", ROCEMU_OP_RC_RDMA_READ_RESPONSE_LAST, READ_PKTS, MTU,
	  SYN_ACK, true },
	{ "an ONLY one PSN before the READ", ROCEMU_OP_RC_RDMA_READ_RESPONSE_ONLY, -1, 64,
	  SYN_ACK, true },
};

static void check_read_responses(void)
{
	int rights = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	struct side_spec spec = side_default;
	long long bad0, ghost0, dropped0;
	unsigned int i, nbad = 0, nghost = 0;
	struct forge f = { .fd = -1 };
	struct buf *local, *remote;
	struct ibv_wc wc;
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	struct pair p;

	spec.knobs.timeout = TIMEOUT_2S;
	if (!pair_open(&p, &spec, &spec))
		goto out;
	local = buf_new(&dev_a, 2 * READ_LEN, 2 * READ_LEN, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	remote = buf_new(&dev_b, READ_LEN, READ_LEN, rights, 0);
	if (!local || !remote || !forge_open_raw(&f, gid_ipv4(&dev_b.gid), ROCEMU_ROCEV2_PORT))
		goto out;
	fill_pattern(remote->p, READ_LEN, 1, 0);
	bad0 = counter(&dev_a, "rx_bad_responses");
	ghost0 = counter(&dev_a, "rx_ghost_acks");
	dropped0 = counter(&dev_b, "fault_dropped");

	/* B's responses are lost, so the READ stays in flight while we forge. */
	if (!cli_fault(dev_b.name, "drop=1"))
		goto out;
	sge = sge_of(local, 0, READ_LEN);
	wr = (struct ibv_send_wr){
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr_of(remote, 0), .rkey = remote->mr->rkey },
	};
	if (!post_send(p.a.qp, &wr, "READ of 4 MTUs") ||
	    !cli_stat_reaches(dev_b.name, "fault_dropped", dropped0 + READ_PKTS,
			      "the READ's responses are lost"))
		goto out_faults;

	for (i = 0; i < sizeof(bad_read_responses) / sizeof(bad_read_responses[0]); i++) {
		const struct forged_resp *r = &bad_read_responses[i];
		uint32_t psn = rocemu_psn_add(PSN_A, (uint32_t)r->psn_off);
		size_t len = forge_build(pkt, r->opcode, p.a.qp->qp_num, psn, false, r->paylen, 0xee);
		uint8_t *aeth = rocemu_pkt_aeth(pkt);
		char what[160];

		if (aeth)
			rocemu_aeth_set_syndrome(aeth, r->syndrome);
		if (!forge_send(&f, gid_ipv4(&dev_a.gid), pkt, len))
			goto out_faults;
		if (r->ghost)
			nghost++;
		else
			nbad++;
		snprintf(what, sizeof(what), "after %s", r->what);
		cli_status_answers(what);
	}
	cli_stat_reaches(dev_a.name, "rx_bad_responses", bad0 + nbad, "responses that fit no request dropped");
	cli_stat_reaches(dev_a.name, "rx_ghost_acks", ghost0 + nghost, "responses outside the PSNs sent ignored");
	check(poll_wc(p.a.send_cq, &wc, 0) == 0, "no forged response completed the READ");
	expect_state(p.a.qp, IBV_QPS_RTS, "after the forged responses");

	/* The responder's own answer, once it gets through, completes the READ with its data. */
	if (!cli_fault(dev_b.name, "off"))
		goto out;
	expect_wc(p.a.send_cq, "the READ, resent", (struct want){ 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, READ_LEN }, NULL);
	check_pattern(local->p, READ_LEN, 1, 0, "READ data");
	check_untouched(local->p + READ_LEN, READ_LEN, UNTOUCHED, "bytes past the READ");
	write_then_read(&p, 2, "WRITE and READ after the forged responses");
	expect_state(p.a.qp, IBV_QPS_RTS, "at the end");
	cli_status_answers("at the end");
out:
	check_close(&f, &p, false);
	return;
out_faults:
	check_close(&f, &p, true);
}

/* ---- ACKs and NAKs outside the PSNs in flight ---- */

struct forged_ack {
	const char *what;
	int32_t psn_off;	/* from the oldest PSN not acknowledged */
	uint8_t syndrome;
};

static const struct forged_ack stale_acks[] = {
	{ "a remote access NAK one PSN behind", -1, SYN_NAK(ROCEMU_NAK_REMOTE_ACCESS_ERROR) },
	{ "an invalid request NAK 4096 PSNs behind", -4096, SYN_NAK(ROCEMU_NAK_INVALID_REQUEST) },
	{ "a remote operational NAK 2^23 PSNs behind", -0x800000, SYN_NAK(ROCEMU_NAK_REMOTE_OP_ERROR) },
	{ "an RNR NAK (655 ms) one PSN behind", -1, SYN_RNR(0) },
	{ "a PSN sequence NAK one PSN behind", -1, SYN_NAK(ROCEMU_NAK_PSN_SEQ_ERROR) },
	{ "an ACK five PSNs behind", -5, SYN_ACK },
	{ "an ACK of the next PSN, not sent", 0, SYN_ACK },
	{ "a remote access NAK 256 PSNs ahead", 256, SYN_NAK(ROCEMU_NAK_REMOTE_ACCESS_ERROR) },
};

/* Send one forged ACK/NAK to a's QP (from b's address) for PSN una + off. */
static bool forge_ack_to_a(struct forge *f, const struct pair *p, uint32_t una, int32_t off,
			   uint8_t syndrome)
{
	size_t len = forge_ack(pkt, p->a.qp->qp_num, rocemu_psn_add(una, (uint32_t)off), syndrome);

	return forge_send(f, gid_ipv4(&dev_a.gid), pkt, len);
}

static void check_stale_acks(void)
{
	int rights = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct side_spec spec = side_default;
	struct forge f = { .fd = -1 };
	long long ghost0, dropped0;
	unsigned int i, sent = 0;
	struct buf *src, *dst;
	uint32_t una = PSN_A;
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	struct pair p;

	spec.knobs.timeout = TIMEOUT_537MS;
	if (!pair_open(&p, &spec, &spec))
		goto out;
	src = buf_new(&dev_a, 64, 64, IBV_ACCESS_LOCAL_WRITE, 0x11);
	dst = buf_new(&dev_b, 64, 64, rights, UNTOUCHED);
	if (!src || !dst || !forge_open_raw(&f, gid_ipv4(&dev_b.gid), ROCEMU_ROCEV2_PORT))
		goto out;
	sge = sge_of(src, 0, 64);
	wr = (struct ibv_send_wr){
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr_of(dst, 0), .rkey = dst->mr->rkey },
	};
	if (!post_send(p.a.qp, &wr, "first WRITE") ||
	    !expect_wc(p.a.send_cq, "first WRITE", (struct want){ 1, IBV_WC_SUCCESS, -1, -1 }, NULL))
		goto out;
	una = rocemu_psn_add(una, 1);
	ghost0 = counter(&dev_a, "rx_ghost_acks");

	/* Nothing in flight: every ACK and NAK is a ghost. */
	for (i = 0; i < sizeof(stale_acks) / sizeof(stale_acks[0]); i++, sent++) {
		char what[160];

		if (!forge_ack_to_a(&f, &p, una, stale_acks[i].psn_off, stale_acks[i].syndrome))
			goto out;
		snprintf(what, sizeof(what), "after %s", stale_acks[i].what);
		cli_status_answers(what);
	}
	srand(8);
	for (i = 0; i < RANDOM_NAKS; i++, sent++)
		if (!forge_ack_to_a(&f, &p, una, rand() & ROCEMU_PSN_MASK,
				    SYN_NAK(ROCEMU_NAK_REMOTE_ACCESS_ERROR)))
			goto out;
	cli_stat_reaches(dev_a.name, "rx_ghost_acks", ghost0 + sent, "stale, random and early ACKs and NAKs ignored");
	expect_state(p.a.qp, IBV_QPS_RTS, "after the stale NAKs");
	cli_status_answers("after the random NAKs");
	write_then_read(&p, 3, "WRITE and READ after the stale NAKs");
	una = rocemu_psn_add(una, 2);

	/* A WRITE in flight (B's ACK lost): a stale NAK still must not fail it. */
	dropped0 = counter(&dev_b, "fault_dropped");
	if (!cli_fault(dev_b.name, "drop=1"))
		goto out;
	wr.wr_id = 2;
	if (!post_send(p.a.qp, &wr, "WRITE in flight") ||
	    !cli_stat_reaches(dev_b.name, "fault_dropped", dropped0 + 1, "the WRITE's ACK is lost"))
		goto out_faults;
	if (!forge_ack_to_a(&f, &p, una, -1, SYN_NAK(ROCEMU_NAK_REMOTE_ACCESS_ERROR)) ||
	    !forge_ack_to_a(&f, &p, una, -1, SYN_RNR(0)) ||
	    !forge_ack_to_a(&f, &p, una, 1, SYN_NAK(ROCEMU_NAK_INVALID_REQUEST)))
		goto out_faults;
	sent += 3;
	cli_stat_reaches(dev_a.name, "rx_ghost_acks", ghost0 + sent, "NAKs around a WRITE in flight ignored");
	expect_state(p.a.qp, IBV_QPS_RTS, "NAKs around a WRITE in flight");
	if (!cli_fault(dev_b.name, "off"))
		goto out;
	expect_wc(p.a.send_cq, "the WRITE, resent", (struct want){ 2, IBV_WC_SUCCESS, -1, -1 }, NULL);
	write_then_read(&p, 4, "WRITE and READ at the end");
	cli_status_answers("at the end");
out:
	check_close(&f, &p, false);
	return;
out_faults:
	check_close(&f, &p, true);
}

/* ---- duplicate READ requests ---- */

/* What came back from the QP: READ response bytes before the ACK of the probe at ack_psn. */
struct reply {
	unsigned int responses;		/* READ response packets */
	uint32_t bytes;
	uint32_t first_psn;
	uint8_t data[READ_LEN];
	bool acked;			/* the ACK of ack_psn came */
	uint8_t nak;			/* syndrome of a NAK for ack_psn, 0 if none */
};

/* Collect what the QP sends until an Acknowledge of ack_psn (at most 5 s). */
static void collect(struct forge *peer, uint32_t ack_psn, struct reply *r)
{
	uint8_t in[FORGE_MAX];
	ssize_t n;

	memset(r, 0, sizeof(*r));
	while ((n = forge_recv(peer, in, sizeof(in), completion_wait_ms)) > 0) {
		ssize_t paylen = rocemu_pkt_payload_len(in, (size_t)n);
		const struct rocemu_opcode_info *info = rocemu_pkt_info(in);

		if (paylen < 0 || !info)
			continue;
		if (info->flags & ROCEMU_OPF_READ) {
			if (!r->responses++)
				r->first_psn = rocemu_bth_psn(in);
			if (r->bytes + paylen <= READ_LEN)
				memcpy(r->data + r->bytes, in + info->length, (size_t)paylen);
			r->bytes += (uint32_t)paylen;
		} else if (rocemu_bth_opcode(in) == ROCEMU_OP_RC_ACKNOWLEDGE &&
			   rocemu_bth_psn(in) == ack_psn) {
			uint8_t syn = rocemu_aeth_syndrome(rocemu_pkt_aeth(in));

			r->acked = true;
			if (rocemu_aeth_syndrome_type(syn) != ROCEMU_AETH_ACK)
				r->nak = syn;
			return;
		}
	}
}

/* A request from the fake peer to QP qpn on device B at psn; RETH over [va, va + len) of mr. */
static bool request(struct forge *peer, uint8_t opcode, uint32_t qpn, uint32_t psn,
		    const struct ibv_mr *mr, uint64_t va, uint32_t len, uint32_t paylen)
{
	size_t n = forge_reth_request(pkt, opcode, qpn, psn, va, mr->rkey, len, paylen, 0xab);

	return forge_send(peer, gid_ipv4(&dev_b.gid), pkt, n);
}

struct dup_case {
	const char *what;
	int access;			/* the responder QP's */
	uint8_t max_dest_rd_atomic;
	bool answered;			/* a new READ would be */
	uint8_t new_read_nak;		/* what a new READ gets when it is not answered */
};

static const struct dup_case dup_cases[] = {
	{ "QP without REMOTE_READ", IBV_ACCESS_REMOTE_WRITE, 4, false,
	  SYN_NAK(ROCEMU_NAK_REMOTE_ACCESS_ERROR) },
	{ "QP with max_dest_rd_atomic 0",
	  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 0, false,
	  SYN_NAK(ROCEMU_NAK_INVALID_REQUEST) },
	{ "QP with REMOTE_READ and responder resources",
	  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 4, true, 0 },
};

static void duplicate_read_case(const struct dup_case *dc, struct forge *peer)
{
	int rights = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct side_spec spec = side_default;
	union ibv_gid peer_gid = { .raw = { [10] = 0xff, [11] = 0xff } };
	struct ibv_qp_attr attr = { .qp_access_flags = (unsigned int)dc->access };
	uint32_t qpn, epsn = PSN_A;
	long long dups0, dups;
	struct reply r;
	struct buf *mem;
	struct side s;
	char what[200];

	memcpy(peer_gid.raw + 12, &peer_addr, sizeof(peer_addr));
	spec.knobs.max_dest_rd_atomic = dc->max_dest_rd_atomic;
	if (!side_open(&s, &dev_b, &spec))
		goto out;
	qpn = s.qp->qp_num;
	mem = buf_new(&dev_b, READ_LEN, READ_LEN, rights, 0);
	if (!mem)
		goto out;
	fill_pattern(mem->p, READ_LEN, 6, 0);
	if (qp_connect(s.qp, FAKE_PEER_QPN, &peer_gid, PSN_B, PSN_A, &spec.knobs) ||
	    ibv_modify_qp(s.qp, &attr, IBV_QP_ACCESS_FLAGS)) {
		check(false, "%s: connecting the QP to the fake peer", dc->what);
		goto out;
	}
	dups0 = counter(&dev_b, "rx_bad_duplicates");

	/* A WRITE it executes moves its expected PSN past epsn. */
	if (!request(peer, ROCEMU_OP_RC_RDMA_WRITE_ONLY, qpn, epsn, mem->mr,
		     raddr_of(mem, READ_LEN - 64), 64, 64))
		goto out;
	collect(peer, epsn, &r);
	snprintf(what, sizeof(what), "%s: a WRITE is acknowledged", dc->what);
	check(r.acked && !r.nak && !r.responses, "%s", what);
	epsn = rocemu_psn_add(epsn, 1);

	/* The same PSN again, as a READ of 64 bytes, then a WRITE whose ACK closes the exchange. */
	if (!request(peer, ROCEMU_OP_RC_RDMA_READ_REQUEST, qpn, PSN_A, mem->mr, raddr_of(mem, 0),
		     64, 0) ||
	    !request(peer, ROCEMU_OP_RC_RDMA_WRITE_ONLY, qpn, epsn, mem->mr,
		     raddr_of(mem, READ_LEN - 64), 4, 4))
		goto out;
	collect(peer, epsn, &r);
	epsn = rocemu_psn_add(epsn, 1);
	snprintf(what, sizeof(what), "%s: duplicate READ %s", dc->what,
		 dc->answered ? "answered with the memory" : "answered with nothing");
	if (dc->answered)
		check(r.acked && r.responses == 1 && r.first_psn == PSN_A && r.bytes == 64 &&
		      pattern_mismatch(r.data, 64, 6, 0) == 64, "%s (%u responses, %u bytes)", what,
		      r.responses, r.bytes);
	else
		check(r.acked && !r.responses, "%s (%u responses, %u bytes%s)", what, r.responses,
		      r.bytes, r.acked ? "" : ", no ACK after it");

	/* A duplicate READ longer than what lies before the expected PSN never had those PSNs. */
	if (dc->answered) {
		if (!request(peer, ROCEMU_OP_RC_RDMA_READ_REQUEST, qpn, rocemu_psn_add(epsn, -1u),
			     mem->mr, raddr_of(mem, 0), 2 * MTU, 0) ||
		    !request(peer, ROCEMU_OP_RC_RDMA_WRITE_ONLY, qpn, epsn, mem->mr,
			     raddr_of(mem, READ_LEN - 64), 4, 4))
			goto out;
		collect(peer, epsn, &r);
		epsn = rocemu_psn_add(epsn, 1);
		check(r.acked && !r.responses, "%s: a duplicate READ past the expected PSN answered with nothing (%u responses)",
		      dc->what, r.responses);
	}
	dups = counter(&dev_b, "rx_bad_duplicates");
	check(dups == dups0 + 1, "%s: rx_bad_duplicates moved by %lld, want 1", dc->what, dups - dups0);
	expect_state(s.qp, IBV_QPS_RTS, "after the duplicate READs");
	cli_status_answers(dc->what);

	/* A new READ gets what a duplicate got: the data, or a NAK and the QP fails. */
	if (!request(peer, ROCEMU_OP_RC_RDMA_READ_REQUEST, qpn, epsn, mem->mr, raddr_of(mem, 0), 64, 0))
		goto out;
	if (dc->answered) {
		if (!request(peer, ROCEMU_OP_RC_RDMA_WRITE_ONLY, qpn, rocemu_psn_add(epsn, 1),
			     mem->mr, raddr_of(mem, READ_LEN - 64), 4, 4))
			goto out;
		collect(peer, rocemu_psn_add(epsn, 1), &r);
		check(r.responses == 1 && r.bytes == 64 && pattern_mismatch(r.data, 64, 6, 0) == 64,
		      "%s: a new READ is answered with the memory", dc->what);
	} else {
		collect(peer, epsn, &r);
		check(r.acked && r.nak == dc->new_read_nak && !r.responses,
		      "%s: a new READ gets NAK 0x%02x (got 0x%02x)", dc->what, dc->new_read_nak, r.nak);
	}
out:
	bufs_free();
	side_close(&s);
}

static void check_duplicate_read(void)
{
	struct forge peer = { .fd = -1 };
	unsigned int i;

	/* The fake peer is this program: RoCEv2 packets come to port 4791. */
	if (!forge_open(&peer, peer_addr, 4791))
		return;
	for (i = 0; i < sizeof(dup_cases) / sizeof(dup_cases[0]); i++)
		duplicate_read_case(&dup_cases[i], &peer);
	forge_close(&peer);
}

int main(int argc, char **argv)
{
	static const struct named_check checks[] = {
		{ "READ responses that do not fit the READ in flight", check_read_responses },
		{ "stale, random and early ACKs and NAKs", check_stale_acks },
		{ "duplicate READ requests", check_duplicate_read },
	};

	return forge_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]), &peer_addr);
}
