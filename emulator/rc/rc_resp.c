/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RC responder: PSN check (duplicates answered again, a gap NAK'd
 * once), opcode sequence and QP access, receive WQEs for SEND and WRITE
 * with immediate, R_Key checks, data placement by DMA, READ responses
 * through the shared segmenter, CQEs at the end of a message and ACKs when
 * asked. Errors are states; rc_qp.c maps them to NAK codes and syndromes.
 * A duplicate READ is executed again only through the checks a new one
 * passes; one that fails them is dropped. A QP whose process is gone
 * answers nothing.
 *
 * Responses leave in PSN order (IBTA 9.7.5.1): a READ accepted becomes a
 * responder resource, answered ROCEMU_RC_RESP_BURST packets at a time, one
 * burst per turn of the loop, so a READ of 2 GiB never holds the daemon.
 * Requests behind it are executed as they come (the relaxed ordering a
 * fence exists for), but their ACKs, NAKs and atomic acknowledges wait
 * behind the READ's responses. A duplicate of a READ still owed restarts it
 * from its PSN, as rxe does; a failure NAKs at once and drops what is owed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emulator/engine/transport.h"
#include "emulator/ring/format.h"
#include "emulator/mem/dma.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/qp.h"
#include "emulator/rc/rc.h"
#include "emulator/rc/resp_atomic.h"
#include "net/roce/roce_hdr.h"
#include "rocemu/log.h"

enum resp_state {
	RESP_CHECK_SRQ,		/* XRC: the SRQ the XRCETH names, in the target's domain */
	RESP_CHECK_PSN,
	RESP_DUPLICATE,
	RESP_CHECK_OP,		/* fits the message in progress and the QP's access */
	RESP_CHECK_RESOURCE,	/* a receive WQE where the message needs one */
	RESP_CHECK_RKEY,	/* first packet of a WRITE: the whole range */
	RESP_EXECUTE,		/* place SEND or WRITE data */
	RESP_READ_REPLY,
	RESP_ATOMIC,		/* execute, remember for replay, answer */
	RESP_COMPLETE,		/* end of a message: MSN, CQE */
	RESP_ACK,
	RESP_ERR_SEQ,		/* PSN gap: NAK once */
	RESP_ERR_RNR,		/* no receive WQE: RNR NAK */
	RESP_BUSY,		/* READ or atomic with every responder resource owed: dropped */
	RESP_ERROR,		/* NAK, CQE if a WQE was taken, QP to ERR */
	RESP_DONE,
};

static const char *const resp_state_names[] = {
	[RESP_CHECK_SRQ] = "CHECK_SRQ",
	[RESP_CHECK_PSN] = "CHECK_PSN",
	[RESP_DUPLICATE] = "DUPLICATE",
	[RESP_CHECK_OP] = "CHECK_OP",
	[RESP_CHECK_RESOURCE] = "CHECK_RESOURCE",
	[RESP_CHECK_RKEY] = "CHECK_RKEY",
	[RESP_EXECUTE] = "EXECUTE",
	[RESP_READ_REPLY] = "READ_REPLY",
	[RESP_ATOMIC] = "ATOMIC",
	[RESP_COMPLETE] = "COMPLETE",
	[RESP_ACK] = "ACK",
	[RESP_ERR_SEQ] = "ERR_SEQ",
	[RESP_ERR_RNR] = "ERR_RNR",
	[RESP_BUSY] = "BUSY",
	[RESP_ERROR] = "ERROR",
	[RESP_DONE] = "DONE",
};

struct resp_ctx {
	struct rocemu_qp *qp;
	struct rocemu_rc_resp *resp;
	const struct rocemu_pkt *pkt;
	uint32_t flags;		/* ROCEMU_OPF_* of the packet */
	bool duplicate;
	enum rocemu_rc_err err;
	int dma_err;		/* what the DMA engine said, for the log */
};

static uint8_t ack_syndrome(void)
{
	return rocemu_aeth_syndrome_make(ROCEMU_AETH_ACK, ROCEMU_AETH_CREDITS_INVALID);
}

static const uint8_t *pkt_reth(const struct resp_ctx *c)
{
	return rocemu_pkt_reth((uint8_t *)c->pkt->bth);
}

/* The responder works in RTR, RTS and SQD, for a process still there. */
bool rocemu_rc_resp_active(const struct rocemu_qp *qp)
{
	return (qp->attr.qp_state == IBV_QPS_RTR || rocemu_rc_sq_active(qp)) && !qp->owner->gone;
}

/* ---- responses owed: responder resources in PSN order ---- */

static bool res_owed(const struct rocemu_rc_resp *resp)
{
	return resp->res_tail != resp->res_head;
}

static struct rocemu_rc_res *res_at(struct rocemu_rc_resp *resp, uint32_t pos)
{
	return &resp->mem->res[pos % ROCEMU_MAX_RD_ATOM];
}

/*
 * A READ or atomic may take a resource: fewer than max_dest_rd_atomic are
 * owed, and the memory for them is there (allocated by the first).
 */
static bool res_free(struct rocemu_qp *qp)
{
	const struct rocemu_rc_resp *resp = &qp->rc->resp;

	return resp->res_head - resp->res_tail < qp->attr.max_dest_rd_atomic &&
	       !rocemu_rc_resp_mem_get(qp);
}

/* The READ still owed whose PSNs hold psn, or NULL. */
static struct rocemu_rc_res *res_read_at(struct rocemu_rc_resp *resp, uint32_t psn)
{
	for (uint32_t pos = resp->res_tail; pos != resp->res_head; pos++) {
		struct rocemu_rc_res *r = res_at(resp, pos);

		if (r->kind == RC_RES_READ && rocemu_psn_diff(psn, r->first_psn) >= 0 &&
		    rocemu_psn_diff(psn, r->last_psn) <= 0)
			return r;
	}
	return NULL;
}

/*
 * An ACK or NAK for psn: an ACK waits for the turn's end (resp_ack.c) when
 * nothing is owed; a NAK leaves at once; both wait behind what is owed.
 */
static void resp_owe_ack(struct resp_ctx *c, uint32_t psn, uint8_t syndrome)
{
	struct rocemu_rc_resp *resp = c->resp;
	struct rocemu_rc_res *last;

	if (!res_owed(resp)) {
		if (syndrome == ack_syndrome() && rocemu_rc_ack_defer(c->qp, psn, syndrome, resp->msn))
			return;
		rocemu_rc_resp_settle(c->qp);
		rocemu_rc_send_ack(c->qp, psn, syndrome, resp->msn);
		return;
	}
	last = res_at(resp, resp->res_head - 1);
	/* One of an earlier PSN says less than the one owed (a NAK at epsn covers epsn - 1). */
	if (last->ack_owed && rocemu_psn_diff(psn, last->ack_psn) < 0)
		return;
	last->ack_owed = true;
	last->ack_psn = psn;
	last->ack_syndrome = syndrome;
	last->ack_msn = resp->msn;
}

/* An atomic's acknowledge: at once when nothing is owed, else behind what is (res_free checked). */
static void resp_owe_atomic(struct resp_ctx *c, uint32_t psn, uint64_t orig)
{
	struct rocemu_rc_resp *resp = c->resp;

	if (!res_owed(resp)) {
		rocemu_rc_send_atomic_ack(c->qp, psn, resp->msn, orig);
		return;
	}
	*res_at(resp, resp->res_head++) = (struct rocemu_rc_res){
		.kind = RC_RES_ATOMIC, .psn = psn, .msn = resp->msn, .orig = orig,
	};
}

/* The READ's R_Key grants its whole range (again before each burst: a key may go meanwhile). */
static int res_read_rkey(const struct rocemu_qp *qp, const struct rocemu_rc_res *r)
{
	unsigned int n;

	return r->length ? rocemu_dma_rkey(qp->mem, r->rkey, r->va, r->length,
					   IBV_ACCESS_REMOTE_READ, NULL, 0, &n) : 0;
}

/* A request with XRCETH takes its receive WQE (and memory, PD, CQ) from the SRQ it names. */
static enum resp_state resp_check_srq(struct resp_ctx *c)
{
	const uint8_t *xrceth = rocemu_pkt_xrceth((uint8_t *)c->pkt->bth);
	const struct rocemu_rc_variant *v = c->qp->rc->variant;

	if (!xrceth || !v || !v->srq_select || !v->srq_select(c->qp, rocemu_xrceth_srqn(xrceth)))
		return RESP_CHECK_PSN;
	/* IBTA A14: NAK invalid request; a duplicate is only dropped. */
	c->err = RC_ERR_REM_INV_REQ;
	c->duplicate = rocemu_psn_diff(c->pkt->psn, c->resp->epsn) < 0;
	return RESP_ERROR;
}

static enum resp_state resp_check_psn(struct resp_ctx *c)
{
	int32_t d = rocemu_psn_diff(c->pkt->psn, c->resp->epsn);

	if (d < 0) {
		c->qp->owner->dev->counters.duplicate_request++;
		return RESP_DUPLICATE;
	}
	if (d > 0) {
		c->qp->owner->dev->counters.out_of_sequence++;
		return RESP_ERR_SEQ;
	}
	c->resp->nak_sent = false;
	return RESP_CHECK_OP;
}

/* The QP grants the remote access the opcode needs. */
static bool access_granted(const struct resp_ctx *c)
{
	unsigned int access = c->qp->attr.qp_access_flags;
	uint16_t f = c->flags;

	return !(((f & ROCEMU_OPF_WRITE) && !(access & IBV_ACCESS_REMOTE_WRITE)) ||
		 ((f & ROCEMU_OPF_READ) && !(access & IBV_ACCESS_REMOTE_READ)) ||
		 ((f & ROCEMU_OPF_ATOMIC) && !(access & IBV_ACCESS_REMOTE_ATOMIC)));
}

/* READ and atomic need responder resources: with none at all they are refused (as rxe). */
static bool rd_atomic_resources(const struct resp_ctx *c)
{
	return !(c->flags & (ROCEMU_OPF_READ | ROCEMU_OPF_ATOMIC)) || c->qp->attr.max_dest_rd_atomic;
}

/* A READ asked again answered PSNs before epsn the first time: its response ends there too. */
static bool duplicate_read_fits(const struct resp_ctx *c)
{
	uint32_t before = (uint32_t)-rocemu_psn_diff(c->pkt->psn, c->resp->epsn);

	return rocemu_rc_npkts(c->qp, rocemu_reth_dma_len(pkt_reth(c))) <= before;
}

/*
 * READs are executed again (they change nothing), through the checks a new
 * one passes; the rest is acknowledged again.
 */
static enum resp_state resp_duplicate(struct resp_ctx *c)
{
	c->duplicate = true;
	if ((c->flags & ROCEMU_OPF_READ) && (c->flags & ROCEMU_OPF_REQ)) {
		c->err = RC_ERR_REM_ACCESS;
		if (!access_granted(c))
			return RESP_ERROR;
		c->err = RC_ERR_REM_INV_REQ;
		if (!rd_atomic_resources(c) || !duplicate_read_fits(c))
			return RESP_ERROR;
		return RESP_READ_REPLY;
	}
	if (c->flags & ROCEMU_OPF_ATOMIC) {
		uint64_t orig;

		/* Answered from the replay cache, never executed twice (IBTA C9-140). */
		if (!rocemu_atomic_replay_find(c->resp, c->pkt->psn, &orig)) {
			c->qp->owner->dev->counters.rx_stale_atomics++;
			return RESP_DONE;
		}
		if (res_owed(c->resp) && !res_free(c->qp))
			return RESP_BUSY;
		resp_owe_atomic(c, c->pkt->psn, orig);
		return RESP_DONE;
	}
	if (rocemu_bth_ackreq(c->pkt->bth))
		resp_owe_ack(c, rocemu_psn_add(c->resp->epsn, -1u), ack_syndrome());
	return RESP_DONE;
}

static enum resp_state resp_check_op(struct resp_ctx *c)
{
	uint16_t f = c->flags;

	c->err = RC_ERR_REM_INV_REQ;
	switch (c->resp->in_msg) {
	case RC_MSG_SEND:
		if (!(f & ROCEMU_OPF_SEND) || (f & ROCEMU_OPF_START))
			return RESP_ERROR;
		break;
	case RC_MSG_WRITE:
		if (!(f & ROCEMU_OPF_WRITE) || (f & ROCEMU_OPF_START))
			return RESP_ERROR;
		break;
	case RC_MSG_NONE:
		if (!(f & ROCEMU_OPF_START))
			return RESP_ERROR;
		break;
	}
	c->err = RC_ERR_REM_ACCESS;
	if (!access_granted(c))
		return RESP_ERROR;
	return RESP_CHECK_RESOURCE;
}

static enum resp_state resp_check_resource(struct resp_ctx *c)
{
	uint16_t f = c->flags;
	int err = rocemu_resp_recv_ready(c->qp, c->resp, f);

	c->err = RC_ERR_LOC_QP_OP;
	if (err)
		return err == -EAGAIN ? RESP_ERR_RNR : RESP_ERROR;
	if (!rd_atomic_resources(c)) {
		c->err = RC_ERR_REM_INV_REQ;
		return RESP_ERROR;
	}
	if ((f & (ROCEMU_OPF_READ | ROCEMU_OPF_ATOMIC)) && !res_free(c->qp))
		return RESP_BUSY;
	if (f & ROCEMU_OPF_READ)
		return RESP_READ_REPLY;
	if (f & ROCEMU_OPF_ATOMIC)
		return RESP_ATOMIC;
	if ((f & ROCEMU_OPF_WRITE) && (f & ROCEMU_OPF_START))
		return RESP_CHECK_RKEY;
	return RESP_EXECUTE;
}

static enum resp_state resp_check_rkey(struct resp_ctx *c)
{
	c->dma_err = rocemu_resp_write_begin(c->qp, c->resp, pkt_reth(c));
	if (c->dma_err) {
		c->err = RC_ERR_REM_ACCESS;
		return RESP_ERROR;
	}
	return RESP_EXECUTE;
}

/* What a failed placement of a SEND's or WRITE's data means (err from rocemu_resp_place_*). */
static enum rocemu_rc_err place_err(uint16_t flags, int err)
{
	if (flags & ROCEMU_OPF_SEND)
		return err == -EMSGSIZE ? RC_ERR_LOC_LEN : RC_ERR_LOC_PROT;
	/* Past the RETH's length is an invalid request; the rest an access error. */
	return err == -EMSGSIZE ? RC_ERR_REM_INV_REQ : RC_ERR_REM_ACCESS;
}

static int place_send(struct resp_ctx *c, const struct iovec *local)
{
	int err = rocemu_resp_place_send(c->qp, c->resp, local, c->pkt);

	c->err = place_err(c->flags, err);
	c->dma_err = err;
	return err;
}

static int place_write(struct resp_ctx *c, const struct iovec *local)
{
	int err = rocemu_resp_place_write(c->qp, c->resp, local, c->pkt);

	c->err = place_err(c->flags, err);
	c->dma_err = err == -EMSGSIZE ? 0 : err;
	return err;
}

static enum resp_state resp_execute(struct resp_ctx *c)
{
	struct rocemu_rc_resp *resp = c->resp;
	struct iovec local = { (void *)c->pkt->payload, c->pkt->paylen };
	bool end = c->flags & ROCEMU_OPF_END;

	c->err = RC_ERR_REM_INV_REQ;
	/* Only the last packet of a message may be shorter than the MTU (IBTA C9-88). */
	if (!end && c->pkt->paylen != c->qp->path.mtu)
		return RESP_ERROR;
	if (local.iov_len && ((c->flags & ROCEMU_OPF_SEND) ? place_send(c, &local)
							   : place_write(c, &local)))
		/* -ECANCELED: an earlier packet's held copy failed and failed the QP. */
		return c->dma_err == -ECANCELED ? RESP_DONE : RESP_ERROR;
	if ((c->flags & ROCEMU_OPF_WRITE) && end && resp->write_left) {
		c->err = RC_ERR_REM_INV_REQ;
		return RESP_ERROR;
	}
	resp->offset += c->pkt->paylen;
	resp->epsn = rocemu_psn_add(resp->epsn, 1);
	if (c->flags & ROCEMU_OPF_START)
		resp->in_msg = (c->flags & ROCEMU_OPF_SEND) ? RC_MSG_SEND : RC_MSG_WRITE;
	return end ? RESP_COMPLETE : RESP_ACK;
}

static enum resp_state resp_complete(struct resp_ctx *c)
{
	struct rocemu_rc_resp *resp = c->resp;
	const uint8_t *ieth = rocemu_pkt_ieth((uint8_t *)c->pkt->bth);

	if (ieth) {
		c->dma_err = rocemu_mr_invalidate(c->qp->mem,
						  rocemu_ieth_rkey(ieth), true);
		if (c->dma_err) {
			c->err = RC_ERR_REM_INV_REQ;
			return RESP_ERROR;
		}
	}
	resp->msn = rocemu_psn_add(resp->msn, 1);
	rocemu_resp_complete(c->qp, resp, c->pkt);
	return RESP_ACK;
}

static enum resp_state resp_ack(struct resp_ctx *c)
{
	if (rocemu_bth_ackreq(c->pkt->bth))
		resp_owe_ack(c, c->pkt->psn, ack_syndrome());
	return RESP_DONE;
}

/*
 * A READ becomes a resource owed; its responses leave from the drain. A
 * duplicate of one still owed restarts it from its own PSN, for what its
 * RETH asks, which must end where the READ ends.
 */
static enum resp_state resp_read_reply(struct resp_ctx *c)
{
	const uint8_t *reth = pkt_reth(c);
	struct rocemu_rc_resp *resp = c->resp;
	struct rocemu_rc_res read = {
		.kind = RC_RES_READ, .replay = c->duplicate, .first_psn = c->pkt->psn,
		.psn = c->pkt->psn, .va = rocemu_reth_va(reth), .rkey = rocemu_reth_rkey(reth),
		.length = rocemu_reth_dma_len(reth),
	};
	struct rocemu_rc_res *owed = c->duplicate ? res_read_at(resp, c->pkt->psn) : NULL;

	/* Past max_msg_sz its PSNs could wrap round the whole space. */
	c->err = RC_ERR_REM_INV_REQ;
	if (read.length > ROCEMU_MAX_MSG_SZ)
		return RESP_ERROR;
	read.last_psn = rocemu_psn_add(read.psn, rocemu_rc_npkts(c->qp, read.length) - 1);
	c->err = RC_ERR_REM_ACCESS;
	c->dma_err = res_read_rkey(c->qp, &read);
	if (c->dma_err)
		return RESP_ERROR;
	if (owed) {
		c->err = RC_ERR_REM_INV_REQ;
		if (read.last_psn != owed->last_psn)
			return RESP_ERROR;
		owed->psn = read.psn;
		owed->va = read.va;
		owed->rkey = read.rkey;
		owed->length = read.length;
		owed->next = 0;
		return RESP_DONE;
	}
	if (!res_free(c->qp))
		return RESP_BUSY;
	if (!c->duplicate) {
		resp->epsn = rocemu_psn_add(resp->epsn, rocemu_rc_npkts(c->qp, read.length));
		resp->msn = rocemu_psn_add(resp->msn, 1);
	}
	read.msn = resp->msn;
	*res_at(resp, resp->res_head++) = read;
	return RESP_DONE;
}

static enum resp_state resp_atomic(struct resp_ctx *c)
{
	struct rocemu_rc_resp *resp = c->resp;
	uint64_t orig;

	c->dma_err = rocemu_atomic_execute(c->qp, rocemu_pkt_atmeth((uint8_t *)c->pkt->bth),
					   (c->pkt->opcode & ~ROCEMU_OP_TRANSPORT_MASK) ==
						   ROCEMU_OP_RC_COMPARE_SWAP, &orig);
	if (c->dma_err) {
		c->err = c->dma_err == -EINVAL ? RC_ERR_REM_INV_REQ : RC_ERR_REM_ACCESS;
		return RESP_ERROR;
	}
	rocemu_atomic_replay_save(resp, c->qp->attr.max_dest_rd_atomic, c->pkt->psn, orig);
	resp->epsn = rocemu_psn_add(resp->epsn, 1);
	resp->msn = rocemu_psn_add(resp->msn, 1);
	resp_owe_atomic(c, c->pkt->psn, orig);
	return RESP_DONE;
}

static enum resp_state resp_err_seq(struct resp_ctx *c)
{
	if (!c->resp->nak_sent) {
		c->resp->nak_sent = true;
		resp_owe_ack(c, c->resp->epsn,
			     rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, ROCEMU_NAK_PSN_SEQ_ERROR));
	}
	return RESP_DONE;
}

static enum resp_state resp_err_rnr(struct resp_ctx *c)
{
	resp_owe_ack(c, c->pkt->psn,
		     rocemu_aeth_syndrome_make(ROCEMU_AETH_RNR_NAK, c->qp->attr.min_rnr_timer));
	return RESP_DONE;
}

/* Dropped: the requester sends it again once a resource is free (local ACK timeout). */
static enum resp_state resp_busy(struct resp_ctx *c)
{
	c->qp->owner->dev->counters.rx_busy_rd_atomics++;
	if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x rx %s: all %u responder resources owed, dropped",
			   c->qp->owner->dev->name, c->qp->qpn, c->pkt->psn, c->pkt->info->name,
			   c->qp->attr.max_dest_rd_atomic);
	return RESP_DONE;
}

/* A request fails at psn: log it, NAK it at once (what is owed goes with the QP), QP to ERR. */
static void resp_fail(struct rocemu_qp *qp, uint32_t psn, const char *what,
		      enum rocemu_rc_err err, int dma_err)
{
	int nak = rocemu_rc_err_nak(err);

	rocemu_log(ROCEMU_LOG_INFO, "%s qp 0x%06x psn 0x%06x %s: %s (dma %s)",
		   qp->owner->dev->name, qp->qpn, psn, what, rocemu_rc_err_name(err),
		   dma_err ? strerror(-dma_err) : "-");
	rocemu_rc_resp_settle(qp);
	if (nak >= 0)
		rocemu_rc_send_ack(qp, psn, rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, (uint8_t)nak),
				   qp->rc->resp.msn);
	rocemu_rc_resp_error(qp, err);
}

/* Packet psn (opcode name) fails qp: its receive WQE completes in error, then the QP. */
static void resp_fail_packet(struct rocemu_qp *qp, uint32_t psn, const char *name,
			     enum rocemu_rc_err err, int dma_err)
{
	char what[64];

	rocemu_resp_recv_fail(qp, &qp->rc->resp, err);
	snprintf(what, sizeof(what), "rx %s", name);
	resp_fail(qp, psn, what, err, dma_err);
}

static enum resp_state resp_error(struct resp_ctx *c)
{
	/* A host that lost its process answers nothing: the requester's retries run out. */
	if (c->dma_err == -ESRCH) {
		rocemu_client_gone(c->qp->mem.client);
		return RESP_DONE;
	}
	/* A duplicate changes nothing, so one that fails is only dropped (never a NAK). */
	if (c->duplicate) {
		c->qp->owner->dev->counters.rx_bad_duplicates++;
		if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
			rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x rx duplicate %s: %s, dropped",
				   c->qp->owner->dev->name, c->qp->qpn, c->pkt->psn,
				   c->pkt->info->name, rocemu_rc_err_name(c->err));
		return RESP_DONE;
	}

	resp_fail_packet(c->qp, c->pkt->psn, c->pkt->info->name, c->err, c->dma_err);
	return RESP_DONE;
}

void rocemu_rc_resp_place_failed(struct rocemu_qp *qp, uint32_t psn, uint32_t msn, uint8_t opcode,
				 int dma_err)
{
	const struct rocemu_opcode_info *info = rocemu_opcode_info(opcode);

	if (!rocemu_rc_resp_active(qp))
		return;
	/* The ACK waiting covers later PSNs; the NAK says where the QP stopped, at its MSN. */
	rocemu_rc_ack_forget(qp);
	qp->rc->resp.msn = msn;
	/* As resp_error does for a packet placed at once. */
	if (dma_err == -ESRCH)
		rocemu_client_gone(qp->mem.client);
	else
		resp_fail_packet(qp, psn, info->name, place_err(info->flags, dma_err), dma_err);
}

/* Up to budget packets of the READ r from where it is; *sent counts them. */
static enum rocemu_rc_err res_read_send(struct rocemu_qp *qp, const struct rocemu_rc_res *r,
					uint32_t budget, uint32_t *sent, int *dma_err)
{
	struct rocemu_rc_msg m = {
		.ops = rocemu_rc_ops_read_resp,
		.psn = r->psn,
		.length = r->length,
		.src = RC_SRC_RKEY,
		.src_va = r->va,
		.src_rkey = r->rkey,
		.syndrome = ack_syndrome(),
		.msn = r->msn,
	};

	*sent = 0;
	*dma_err = res_read_rkey(qp, r);
	if (*dma_err)
		return RC_ERR_REM_ACCESS;
	*dma_err = rocemu_rc_send_msg(qp, &m, r->next * qp->path.mtu, budget, sent);
	/* Memory the process does not map is an unresolved page fault: an access error (ODP). */
	return !*dma_err ? RC_ERR_NONE : *dma_err == -EFAULT ? RC_ERR_REM_ACCESS : RC_ERR_REM_OP;
}

/*
 * The READ r failed at its next packet: a duplicate's replay is dropped
 * (true: go on), anything else fails the QP, and a gone process stops it.
 */
static bool res_read_dropped(struct rocemu_qp *qp, const struct rocemu_rc_res *r,
			     enum rocemu_rc_err err, int dma_err)
{
	uint32_t psn = rocemu_psn_add(r->psn, r->next);

	if (dma_err == -ESRCH) {
		rocemu_client_gone(qp->mem.client);
		return false;
	}
	if (!r->replay) {
		resp_fail(qp, psn, "tx READ response", err, dma_err);
		return false;
	}
	qp->owner->dev->counters.rx_bad_duplicates++;
	if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x tx READ response of a duplicate: %s, dropped",
			   qp->owner->dev->name, qp->qpn, psn, rocemu_rc_err_name(err));
	return true;
}

void rocemu_rc_resp_drain(struct rocemu_qp *qp)
{
	struct rocemu_rc_resp *resp = &qp->rc->resp;
	uint32_t budget = ROCEMU_RC_RESP_BURST;

	if (!rocemu_rc_resp_active(qp)) {
		rocemu_rc_resp_forget(qp);
		return;
	}
	rocemu_rc_resp_settle(qp);
	while (res_owed(resp)) {
		struct rocemu_rc_res *r = res_at(resp, resp->res_tail);
		uint32_t left, sent;
		enum rocemu_rc_err err;
		int dma_err;

		if (r->kind == RC_RES_ATOMIC) {
			rocemu_rc_send_atomic_ack(qp, r->psn, r->msn, r->orig);
		} else if ((left = rocemu_rc_npkts(qp, r->length) - r->next)) {
			if (!budget)
				break;
			err = res_read_send(qp, r, budget, &sent, &dma_err);
			if (err && !res_read_dropped(qp, r, err, dma_err))
				return;
			r->next += sent;
			budget -= sent;
			if (!err && sent < left)
				break;
		}
		if (r->ack_owed)
			rocemu_rc_send_ack(qp, r->ack_psn, r->ack_syndrome, r->ack_msn);
		resp->res_tail++;
	}
	if (res_owed(resp))
		rocemu_qp_timer_arm(qp, ROCEMU_QP_TIMER_RESP, rocemu_now_ns());
}

void rocemu_rc_resp_forget(struct rocemu_qp *qp)
{
	qp->rc->resp.res_tail = qp->rc->resp.res_head;
	rocemu_qp_timer_cancel(qp, ROCEMU_QP_TIMER_RESP);
}

/*
 * The expected packet of a WRITE without immediate, or the middle of a
 * SEND, may join held data and waiting ACKs; anything else may read,
 * complete (a CQE), take a receive WQE for, or NAK what they stand for.
 */
static bool joins_held(const struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	uint32_t f = pkt->info->flags;

	if (pkt->psn != qp->rc->resp.epsn || (f & ROCEMU_OPF_IMM))
		return false;
	return (f & ROCEMU_OPF_WRITE) || ((f & ROCEMU_OPF_SEND) && (f & ROCEMU_OPF_MIDDLE));
}

void rocemu_rc_resp_packet(struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	struct resp_ctx c = { .qp = qp, .resp = &qp->rc->resp, .pkt = pkt,
			      .flags = pkt->info->flags };
	enum resp_state state = RESP_CHECK_SRQ;

	if (!rocemu_rc_resp_active(qp))
		return;
	/* What is held and waiting goes before any packet but the next one of a plain message. */
	if (!joins_held(qp, pkt)) {
		rocemu_rc_resp_settle(qp);
		if (!rocemu_rc_resp_active(qp))
			return;
	}
	rocemu_rc_qp_rx(qp);
	while (state != RESP_DONE) {
		if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
			rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x resp %s",
				   qp->owner->dev->name, qp->qpn, pkt->psn, resp_state_names[state]);
		switch (state) {
		case RESP_CHECK_SRQ:
			state = resp_check_srq(&c);
			break;
		case RESP_CHECK_PSN:
			state = resp_check_psn(&c);
			break;
		case RESP_DUPLICATE:
			state = resp_duplicate(&c);
			break;
		case RESP_CHECK_OP:
			state = resp_check_op(&c);
			break;
		case RESP_CHECK_RESOURCE:
			state = resp_check_resource(&c);
			break;
		case RESP_CHECK_RKEY:
			state = resp_check_rkey(&c);
			break;
		case RESP_EXECUTE:
			state = resp_execute(&c);
			break;
		case RESP_READ_REPLY:
			state = resp_read_reply(&c);
			break;
		case RESP_ATOMIC:
			state = resp_atomic(&c);
			break;
		case RESP_COMPLETE:
			state = resp_complete(&c);
			break;
		case RESP_ACK:
			state = resp_ack(&c);
			break;
		case RESP_ERR_SEQ:
			state = resp_err_seq(&c);
			break;
		case RESP_ERR_RNR:
			state = resp_err_rnr(&c);
			break;
		case RESP_BUSY:
			state = resp_busy(&c);
			break;
		case RESP_ERROR:
			state = resp_error(&c);
			break;
		case RESP_DONE:
			break;
		}
	}
	/* What this packet left owed starts now; with a burst pending, it waits its turn. */
	if (res_owed(c.resp) && !rocemu_qp_timer_armed(qp, ROCEMU_QP_TIMER_RESP))
		rocemu_rc_resp_drain(qp);
}
