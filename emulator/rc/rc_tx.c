/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What RC and UC put on the wire: the one segmenter of SEND, RDMA WRITE,
 * READ request and READ response messages (path MTU, opcode by position,
 * headers the opcode table says it carries, payload by DMA, ICRC), and
 * acknowledges. Runs of equal-sized packets leave as one UDP_SEGMENT send;
 * the messages of one run of the requester wait in a stage and leave
 * together.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "emulator/engine/egress.h"
#include "emulator/engine/wqe_gather.h"
#include "emulator/mem/dma.h"
#include "emulator/obj/qp.h"
#include "emulator/rc/rc.h"
#include "net/roce/roce_hdr.h"
#include "rocemu/log.h"

#define DGRAM_BYTES 65507u	/* the largest UDP payload over IPv4: one GSO batch */
#define STAGE_BATCHES 4u	/* GSO batches built before one gather reads their data */
#define GSO_MAX_SEGS ROCEMU_IPV4_SEND_IDS
_Static_assert(GSO_MAX_SEGS <= ROCEMU_GATHER_MAX_IOV, "a GSO batch is gathered at once");
#define ROCE_PKEY_DEFAULT 0xffff

enum { POS_FIRST, POS_MIDDLE, POS_LAST, POS_ONLY };

#define OPS(t, prefix, last, only) { ROCEMU_OP_##t##_##prefix##_FIRST, \
				     ROCEMU_OP_##t##_##prefix##_MIDDLE, ROCEMU_OP_##t##_##last, \
				     ROCEMU_OP_##t##_##only }
const uint8_t rocemu_rc_ops_send[4] = OPS(RC, SEND, SEND_LAST, SEND_ONLY);
const uint8_t rocemu_rc_ops_send_imm[4] = OPS(RC, SEND, SEND_LAST_WITH_IMMEDIATE,
					      SEND_ONLY_WITH_IMMEDIATE);
const uint8_t rocemu_rc_ops_write[4] = OPS(RC, RDMA_WRITE, RDMA_WRITE_LAST, RDMA_WRITE_ONLY);
const uint8_t rocemu_rc_ops_write_imm[4] = OPS(RC, RDMA_WRITE, RDMA_WRITE_LAST_WITH_IMMEDIATE,
					       RDMA_WRITE_ONLY_WITH_IMMEDIATE);
const uint8_t rocemu_rc_ops_read_req[4] = {
	ROCEMU_OP_RC_RDMA_READ_REQUEST, ROCEMU_OP_RC_RDMA_READ_REQUEST,
	ROCEMU_OP_RC_RDMA_READ_REQUEST, ROCEMU_OP_RC_RDMA_READ_REQUEST,
};
const uint8_t rocemu_rc_ops_read_resp[4] = OPS(RC, RDMA_READ_RESPONSE, RDMA_READ_RESPONSE_LAST,
					       RDMA_READ_RESPONSE_ONLY);
const uint8_t rocemu_rc_ops_send_inv[4] = OPS(RC, SEND, SEND_LAST_WITH_INVALIDATE,
					      SEND_ONLY_WITH_INVALIDATE);
const uint8_t rocemu_rc_ops_cmp_swap[4] = {
	ROCEMU_OP_RC_COMPARE_SWAP, ROCEMU_OP_RC_COMPARE_SWAP,
	ROCEMU_OP_RC_COMPARE_SWAP, ROCEMU_OP_RC_COMPARE_SWAP,
};
const uint8_t rocemu_rc_ops_fetch_add[4] = {
	ROCEMU_OP_RC_FETCH_ADD, ROCEMU_OP_RC_FETCH_ADD,
	ROCEMU_OP_RC_FETCH_ADD, ROCEMU_OP_RC_FETCH_ADD,
};
/* UC carries SEND and RDMA WRITE only, with the same headers (IBTA 9.2). */
const uint8_t rocemu_uc_ops_send[4] = OPS(UC, SEND, SEND_LAST, SEND_ONLY);
const uint8_t rocemu_uc_ops_send_imm[4] = OPS(UC, SEND, SEND_LAST_WITH_IMMEDIATE,
					      SEND_ONLY_WITH_IMMEDIATE);
const uint8_t rocemu_uc_ops_write[4] = OPS(UC, RDMA_WRITE, RDMA_WRITE_LAST, RDMA_WRITE_ONLY);
const uint8_t rocemu_uc_ops_write_imm[4] = OPS(UC, RDMA_WRITE, RDMA_WRITE_LAST_WITH_IMMEDIATE,
					       RDMA_WRITE_ONLY_WITH_IMMEDIATE);
#undef OPS

/* The datagram batches of one gather are built here: the daemon is single-threaded. */
static uint8_t stage[STAGE_BATCHES * DGRAM_BYTES];
/* Counts builds into stage: a send that reached a nested build (delivery in the daemon) is seen. */
static uint64_t stage_builds;

/* One UDP_SEGMENT send: its packets are local[first..], their lengths wire[first..]. */
struct gso_batch {
	size_t off, len, seg_len;	/* in stage; every segment seg_len but the last */
	uint32_t first, nseg, bytes;	/* bytes: their payload */
	uint32_t msg, idx;		/* its message (in the list sent) and that one's packet */
};

/* The packets and payload slots of one gather: several batches, of one message or several. */
struct tx_round {
	struct gso_batch batch[ROCEMU_GATHER_MAX_IOV];
	struct iovec local[ROCEMU_GATHER_MAX_IOV];
	size_t wire[ROCEMU_GATHER_MAX_IOV];
	uint32_t nbatch, npkts;
};

uint32_t rocemu_rc_npkts(const struct rocemu_qp *qp, uint32_t len)
{
	return len ? (len + qp->path.mtu - 1) / qp->path.mtu : 1;
}

static void tx_log(const struct rocemu_qp *qp, const uint8_t *pkt, uint32_t paylen)
{
	if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x tx %s len %u%s",
			   qp->owner->dev->name, qp->qpn, rocemu_bth_psn(pkt),
			   rocemu_opcode_name(rocemu_bth_opcode(pkt)), paylen,
			   rocemu_bth_ackreq(pkt) ? " ackreq" : "");
}

static void bth_fill(const struct rocemu_qp *qp, uint8_t *pkt, uint8_t opcode, uint32_t psn,
		     uint32_t paylen, bool ackreq, bool se)
{
	rocemu_bth_set_opcode(pkt, opcode);
	rocemu_bth_set_se(pkt, se);
	rocemu_bth_set_padcnt(pkt, rocemu_pad_bytes(paylen));
	rocemu_bth_set_tver(pkt, ROCEMU_BTH_TVER);
	rocemu_bth_set_pkey(pkt, ROCE_PKEY_DEFAULT);
	rocemu_bth_set_destqp(pkt, qp->attr.dest_qp_num);
	rocemu_bth_set_ackreq(pkt, ackreq);
	rocemu_bth_set_psn(pkt, psn);
}

/* DC: a request's access key, connection and source DCI (a response's DCETH stays 0). */
static void dc_fill(const struct rocemu_qp *qp, uint8_t *pkt, const struct rocemu_opcode_info *info)
{
	uint8_t *h;

	if (!(info->flags & ROCEMU_OPF_REQ) || !(h = rocemu_pkt_dceth(pkt)))
		return;
	rocemu_dceth_set_key(h, qp->rc->dc_key);
	h = rocemu_pkt_rdeth(pkt);
	rocemu_rdeth_set_dc_connect(h, rocemu_bth_psn(pkt) == qp->rc->dc_connect_psn);
	rocemu_rdeth_set_eecn(h, qp->rc->dc_conn);
	rocemu_deth_set_src_qp(rocemu_pkt_deth(pkt), qp->qpn);
}

/* Headers of packet idx of npkts of m at pkt; returns the opcode's info. */
static const struct rocemu_opcode_info *headers_fill(const struct rocemu_qp *qp,
						      const struct rocemu_rc_msg *m, uint8_t *pkt,
						      uint32_t idx, uint32_t npkts, uint32_t paylen)
{
	int pos = npkts == 1 ? POS_ONLY : !idx ? POS_FIRST : idx == npkts - 1 ? POS_LAST
						: POS_MIDDLE;
	uint8_t opcode = m->ops[pos] | qp->rc->opclass;
	const struct rocemu_opcode_info *info = rocemu_opcode_info(opcode);
	bool last = idx == npkts - 1;
	uint8_t *h;

	memset(pkt, 0, info->length);
	bth_fill(qp, pkt, opcode, rocemu_psn_add(m->psn, idx), paylen,
		 m->ackreq && (last || idx % ROCEMU_RC_ACK_EVERY == ROCEMU_RC_ACK_EVERY - 1),
		 m->se && last);
	dc_fill(qp, pkt, info);
	if ((h = rocemu_pkt_xrceth(pkt)))
		rocemu_xrceth_set_srqn(h, m->xrc_srqn);
	if ((h = rocemu_pkt_reth(pkt))) {
		rocemu_reth_set_va(h, m->reth_va);
		rocemu_reth_set_rkey(h, m->reth_rkey);
		rocemu_reth_set_dma_len(h, m->reth_len);
	}
	if ((h = rocemu_pkt_immdt(pkt)))
		memcpy(h, &m->imm, sizeof(m->imm));
	if ((h = rocemu_pkt_ieth(pkt)))
		rocemu_ieth_set_rkey(h, m->ieth_rkey);
	if ((h = rocemu_pkt_atmeth(pkt))) {
		rocemu_atmeth_set_va(h, m->reth_va);
		rocemu_atmeth_set_rkey(h, m->reth_rkey);
		rocemu_atmeth_set_swap_add(h, m->atomic_swap_add);
		rocemu_atmeth_set_compare(h, m->atomic_compare);
	}
	if ((h = rocemu_pkt_aeth(pkt))) {
		rocemu_aeth_set_syndrome(h, m->syndrome);
		rocemu_aeth_set_msn(h, m->msn);
	}
	return info;
}

/*
 * The payload of bytes [off, off + len) of m's source, for the slots local:
 * inline bytes copied now, the slots left (rest) and the memory to read
 * into them (remote, at most max segments).
 */
static int payload_segs(const struct rocemu_qp *qp, const struct rocemu_rc_msg *m, uint32_t off,
			uint32_t len, const struct iovec *local, unsigned int nlocal,
			struct iovec *rest, unsigned int *nrest, struct rocemu_dma_seg *remote,
			unsigned int max, unsigned int *n)
{
	*nrest = 0;
	*n = 0;
	if (!len)
		return 0;
	switch (m->src) {
	case RC_SRC_WQE:
		return rocemu_wqe_gather_segs(qp, m->wqe, off, len, local, nlocal, rest, nrest,
					      remote, max, n);
	case RC_SRC_RKEY:
		memcpy(rest, local, nlocal * sizeof(*local));
		*nrest = nlocal;
		/* The R_Key again for each packet: a key may go, or be laid out anew, meanwhile. */
		return rocemu_dma_rkey(qp->mem, m->src_rkey, m->src_va + off, len,
				       IBV_ACCESS_REMOTE_READ, remote, max, n);
	case RC_SRC_NONE:
	default:
		return -EINVAL;
	}
}

/*
 * Fill the payload slots of batches [from, to) of the round r, with one
 * process_vm_readv as a rule: 0 or -errno.
 */
static int batches_gather(const struct rocemu_qp *qp, const struct rocemu_rc_tx *tx,
			  const struct tx_round *r, uint32_t from, uint32_t to)
{
	static struct rocemu_dma_seg remote[2 * ROCEMU_DMA_MAX_SEGS];
	struct iovec rest[ROCEMU_GATHER_MAX_IOV];
	unsigned int nrest = 0, nremote = 0, nr, n;
	const struct rocemu_mm *mm = qp->mem.client->mm;
	int err;

	for (uint32_t i = from; i < to; i++) {
		const struct gso_batch *b = &r->batch[i];

		/* Room for the most one batch resolves to: else read what is gathered so far. */
		if (nremote > ROCEMU_DMA_MAX_SEGS) {
			err = rocemu_dma_copy(mm, rest, nrest, remote, nremote, false);
			if (err)
				return err;
			nrest = nremote = 0;
		}
		err = payload_segs(qp, &tx[b->msg].m, b->idx * qp->path.mtu, b->bytes,
				   &r->local[b->first], b->nseg, rest + nrest, &nr, remote + nremote,
				   ROCEMU_DMA_MAX_SEGS, &n);
		if (err)
			return err;
		nrest += nr;
		nremote += n;
	}
	return rocemu_dma_copy(mm, rest, nrest, remote, nremote, false);
}

static void datagram_send(struct rocemu_qp *qp, const void *buf, size_t len, uint16_t gso)
{
	int err = rocemu_egress_send(qp->owner->dev, qp->path.tx_fd, &qp->path.flow, buf, len, gso);

	if (err)
		rocemu_log(ROCEMU_LOG_WARN, "%s qp 0x%06x: send of %zu bytes failed: %s",
			   qp->owner->dev->name, qp->qpn, len, strerror(-err));
}

/*
 * Lay out the packets of one GSO batch from packet *idx at stage + b->off:
 * equal-sized packets, the last possibly shorter (UDP_SEGMENT rule), at
 * most room of them, their payload slots in local and lengths in wire.
 */
static void batch_build(const struct rocemu_qp *qp, const struct rocemu_rc_msg *m,
			struct gso_batch *b, uint32_t *idx, uint32_t npkts, uint32_t room,
			struct iovec *local, size_t *wire)
{
	uint32_t mtu = qp->path.mtu;

	while (*idx < npkts && b->nseg < room && b->nseg < GSO_MAX_SEGS) {
		uint32_t paylen = m->length - *idx * mtu < mtu ? m->length - *idx * mtu : mtu;
		uint8_t *pkt = stage + b->off + b->len;
		const struct rocemu_opcode_info *info;
		size_t len;

		if (b->nseg && b->len + mtu + 64 > DGRAM_BYTES)
			break;
		info = headers_fill(qp, m, pkt, *idx, npkts, paylen);
		len = rocemu_pkt_wire_len(info, paylen);
		if (b->nseg && len > b->seg_len)
			break;	/* a longer packet starts the next batch */
		local[b->first + b->nseg] = (struct iovec){ pkt + info->length, paylen };
		memset(pkt + info->length + paylen, 0, rocemu_pad_bytes(paylen));
		wire[b->first + b->nseg] = len;
		if (!b->nseg)
			b->seg_len = len;
		b->len += len;
		b->bytes += paylen;
		b->nseg++;
		(*idx)++;
		if (len < b->seg_len)
			break;	/* a shorter one ends the batch */
	}
}

static void batch_send(struct rocemu_qp *qp, const struct gso_batch *b, const struct iovec *local,
		       const size_t *wire)
{
	size_t at = b->off;

	for (uint32_t i = b->first; i < b->first + b->nseg; at += wire[i], i++) {
		rocemu_icrc_append_v4(&qp->path.flow, stage + at, wire[i] - ROCEMU_ICRC_BYTES,
				      rocemu_ipv4_send_id(i - b->first));
		tx_log(qp, stage + at, (uint32_t)local[i].iov_len);
	}
	datagram_send(qp, stage + b->off, b->len, b->nseg > 1 ? (uint16_t)b->seg_len : 0);
}

/* The packet after the last one tx may send (its offset on, at most max_pkts). */
static uint32_t tx_end(const struct rocemu_qp *qp, const struct rocemu_rc_tx *tx)
{
	uint32_t npkts = rocemu_rc_npkts(qp, tx->m.length), idx = tx->offset / qp->path.mtu;

	return tx->max_pkts < npkts - idx ? idx + tx->max_pkts : npkts;
}

/*
 * Lay out a round from packet *idx of message *msg on: batches while the
 * stage has room for a whole one and the round for a packet; *msg and
 * *idx move past what it holds.
 */
static void round_build(const struct rocemu_qp *qp, const struct rocemu_rc_tx *tx, unsigned int n,
			unsigned int *msg, uint32_t *idx, struct tx_round *r)
{
	size_t used = 0;

	r->nbatch = r->npkts = 0;
	while (*msg < n && r->npkts < ROCEMU_GATHER_MAX_IOV && sizeof(stage) - used >= DGRAM_BYTES) {
		const struct rocemu_rc_tx *t = &tx[*msg];
		uint32_t end = tx_end(qp, t), room = ROCEMU_GATHER_MAX_IOV - r->npkts;
		struct gso_batch *b;

		if (*idx >= end) {
			if (++*msg < n)
				*idx = tx[*msg].offset / qp->path.mtu;
			continue;
		}
		b = &r->batch[r->nbatch++];
		*b = (struct gso_batch){ .off = used, .first = r->npkts, .msg = *msg, .idx = *idx };
		batch_build(qp, &t->m, b, idx, rocemu_rc_npkts(qp, t->m.length),
			    end - *idx < room ? end - *idx : room, r->local, r->wire);
		used += b->len;
		r->npkts += b->nseg;
	}
}

int rocemu_rc_send_msgs(struct rocemu_qp *qp, struct rocemu_rc_tx *tx, unsigned int n,
			unsigned int *failed)
{
	struct tx_round r;	/* on the stack: a nested build has its own */
	unsigned int msg = 0;
	uint32_t idx = n ? tx[0].offset / qp->path.mtu : 0;

	for (unsigned int i = 0; i < n; i++)
		tx[i].sent = 0;
	while (msg < n) {
		uint64_t build = ++stage_builds;
		bool redo;

		round_build(qp, tx, n, &msg, &idx, &r);
		/* A failed read is redone batch by batch: those before the failing one still go. */
		redo = batches_gather(qp, tx, &r, 0, r.nbatch) != 0;
		for (uint32_t i = 0; i < r.nbatch; i++) {
			const struct gso_batch *b = &r.batch[i];
			int err = redo ? batches_gather(qp, tx, &r, i, i + 1) : 0;

			if (err) {
				*failed = b->msg;
				return err;
			}
			batch_send(qp, b, r.local, r.wire);
			tx[b->msg].sent += b->nseg;
			/* Sending built into stage again: the batches left are built anew. */
			if (stage_builds != build && i + 1 < r.nbatch) {
				msg = r.batch[i + 1].msg;
				idx = r.batch[i + 1].idx;
				break;
			}
		}
	}
	return 0;
}

int rocemu_rc_send_msg(struct rocemu_qp *qp, const struct rocemu_rc_msg *m, uint32_t offset,
		       uint32_t max_pkts, uint32_t *sent)
{
	struct rocemu_rc_tx tx = { .m = *m, .offset = offset, .max_pkts = max_pkts };
	unsigned int failed;
	int err = rocemu_rc_send_msgs(qp, &tx, 1, &failed);

	*sent = tx.sent;
	return err;
}

/* Where the requester stood before a staged message: what a failed read restores. */
struct staged_from {
	uint32_t pos, cursor_psn, sent_psn;
};

/*
 * The requester's stage: consecutive messages of one QP whose payload
 * comes from their WQEs wait here during one run of the requester, then
 * leave together in order, the payloads of several read by one
 * process_vm_readv. Each keeps a copy of its WQE (the parse cache moves on
 * to the next) and the requester's state before it, so a failed read puts
 * the requester back where that message began. One stage: the daemon is
 * single-threaded, and a run nested in a flush sends at once.
 */
static struct {
	const struct rocemu_qp *qp;	/* the run holding the stage, NULL when free */
	unsigned int n;
	struct rocemu_rc_tx tx[ROCEMU_RC_STAGE_MSGS];
	struct rocemu_send_wqe wqe[ROCEMU_RC_STAGE_MSGS];
	struct staged_from from[ROCEMU_RC_STAGE_MSGS];
} run_stage;

bool rocemu_rc_stage_claim(const struct rocemu_qp *qp)
{
	if (run_stage.qp)
		return false;
	run_stage.qp = qp;
	run_stage.n = 0;
	return true;
}

void rocemu_rc_stage_release(void)
{
	run_stage.qp = NULL;
	run_stage.n = 0;
}

bool rocemu_rc_stage_add(const struct rocemu_qp *qp, const struct rocemu_rc_msg *m,
			 uint32_t offset, uint32_t max_pkts)
{
	const struct rocemu_rc_req *req = &qp->rc->req;
	unsigned int i = run_stage.n;

	if (run_stage.qp != qp || i == ROCEMU_RC_STAGE_MSGS)
		return false;
	/* The inline bytes past inline_len are never read. */
	memcpy(&run_stage.wqe[i], m->wqe, offsetof(struct rocemu_send_wqe, inline_data) +
	       m->wqe->inline_len);
	run_stage.tx[i] = (struct rocemu_rc_tx){ .m = *m, .offset = offset, .max_pkts = max_pkts };
	run_stage.tx[i].m.wqe = &run_stage.wqe[i];
	run_stage.from[i] = (struct staged_from){ .pos = req->cursor, .cursor_psn = req->cursor_psn,
					      .sent_psn = req->sent_psn };
	run_stage.n++;
	return true;
}

int rocemu_rc_stage_flush(struct rocemu_qp *qp)
{
	struct rocemu_rc_req *req = &qp->rc->req;
	unsigned int n = run_stage.n, failed;
	int err;

	if (run_stage.qp != qp || !n)
		return 0;
	err = rocemu_rc_send_msgs(qp, run_stage.tx, n, &failed);
	run_stage.n = 0;
	if (err) {
		req->cursor = run_stage.from[failed].pos;
		req->cursor_psn = run_stage.from[failed].cursor_psn;
		req->sent_psn = run_stage.from[failed].sent_psn;
	}
	return err;
}

/* BTH, DCETH for DC and AETH of an acknowledge; returns the opcode's info. */
static const struct rocemu_opcode_info *ack_fill(const struct rocemu_qp *qp, uint8_t *pkt,
						  uint8_t opcode, uint32_t psn, uint8_t syndrome,
						  uint32_t msn)
{
	const struct rocemu_opcode_info *info = rocemu_opcode_info(opcode | qp->rc->opclass);

	memset(pkt, 0, info->length);
	bth_fill(qp, pkt, opcode | qp->rc->opclass, psn, 0, false, false);
	rocemu_aeth_set_syndrome(rocemu_pkt_aeth(pkt), syndrome);
	rocemu_aeth_set_msn(rocemu_pkt_aeth(pkt), msn);
	return info;
}

#define ACK_MAX_BYTES 64	/* the longest acknowledge, DC's atomic one, with ICRC */

void rocemu_rc_send_ack(struct rocemu_qp *qp, uint32_t psn, uint8_t syndrome, uint32_t msn)
{
	uint8_t pkt[ACK_MAX_BYTES];
	const struct rocemu_opcode_info *info =
		ack_fill(qp, pkt, ROCEMU_OP_RC_ACKNOWLEDGE, psn, syndrome, msn);
	size_t len = rocemu_icrc_append_v4(&qp->path.flow, pkt, info->length, rocemu_ipv4_send_id(0));

	if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x tx %s syndrome 0x%02x msn %u",
			   qp->owner->dev->name, qp->qpn, psn,
			   rocemu_opcode_name(rocemu_bth_opcode(pkt)), syndrome, msn);
	datagram_send(qp, pkt, len, 0);
}

void rocemu_rc_send_atomic_ack(struct rocemu_qp *qp, uint32_t psn, uint32_t msn, uint64_t orig)
{
	uint8_t pkt[ACK_MAX_BYTES];
	const struct rocemu_opcode_info *info =
		ack_fill(qp, pkt, ROCEMU_OP_RC_ATOMIC_ACKNOWLEDGE, psn,
			 rocemu_aeth_syndrome_make(ROCEMU_AETH_ACK, ROCEMU_AETH_CREDITS_INVALID), msn);
	size_t len;

	rocemu_atmack_set_orig(rocemu_pkt_atmack(pkt), orig);
	len = rocemu_icrc_append_v4(&qp->path.flow, pkt, info->length, rocemu_ipv4_send_id(0));
	tx_log(qp, pkt, 0);
	datagram_send(qp, pkt, len, 0);
}
