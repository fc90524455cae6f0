/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The UC responder (IBTA 9.8.3, and kernel Soft-RoCE's UC paths in
 * rxe_resp.c): nothing is acknowledged, so what cannot be taken is
 * dropped, and a message that loses a packet is lost whole. A PSN gap in
 * a message, or a packet that does not continue the message in progress,
 * drops the rest of it until a FIRST or ONLY starts the next one, at any
 * PSN. A FIRST or ONLY that cuts into a message abandons it (IBTA class
 * D1). The receive WQE a lost SEND had taken is not completed: the next
 * message fills it again from its start, as rxe resets it. No receive WQE,
 * an R_Key or access check failing, a malformed packet: the message is
 * dropped and counted (rx_uc_dropped). Only a fault on this side's own
 * memory (a SEND longer than the receive WQE, its SGEs no longer
 * writable) completes the WQE in error and moves the QP to ERR.
 */
#include <errno.h>
#include <string.h>

#include "emulator/obj/qp.h"
#include "emulator/rc/rc.h"
#include "emulator/uc/uc.h"
#include "net/roce/roce_hdr.h"
#include "rocemu/log.h"

enum resp_state {
	RESP_CHECK_PSN,		/* expected, or the start of a message */
	RESP_CHECK_OP,		/* continues the message in progress; the QP's access */
	RESP_CHECK_RESOURCE,	/* a receive WQE where the message needs one */
	RESP_CHECK_RKEY,	/* first packet of a WRITE: the whole range */
	RESP_EXECUTE,		/* place SEND or WRITE data; CQE at the end of a message */
	RESP_DROP,		/* drop the rest of this message */
	RESP_ERROR,		/* CQE in error, QP to ERR */
	RESP_DONE,
};

static const char *const resp_state_names[] = {
	[RESP_CHECK_PSN] = "CHECK_PSN",
	[RESP_CHECK_OP] = "CHECK_OP",
	[RESP_CHECK_RESOURCE] = "CHECK_RESOURCE",
	[RESP_CHECK_RKEY] = "CHECK_RKEY",
	[RESP_EXECUTE] = "EXECUTE",
	[RESP_DROP] = "DROP",
	[RESP_ERROR] = "ERROR",
	[RESP_DONE] = "DONE",
};

struct resp_ctx {
	struct rocemu_qp *qp;
	struct rocemu_rc_resp *resp;
	const struct rocemu_pkt *pkt;
	uint32_t flags;		/* ROCEMU_OPF_* of the packet */
	const char *why;	/* why a message is dropped, for the log */
	enum rocemu_rc_err err;
	int dma_err;
};

/* The message in progress is lost; a receive WQE it took waits for the next one. */
static void message_abandon(struct resp_ctx *c)
{
	c->resp->in_msg = RC_MSG_NONE;
	c->resp->offset = 0;
	c->resp->dropping = false;
}

static enum resp_state drop(struct resp_ctx *c, const char *why)
{
	c->why = why;
	return RESP_DROP;
}

static enum resp_state resp_check_psn(struct resp_ctx *c)
{
	struct rocemu_rc_resp *resp = c->resp;

	if (c->pkt->psn != resp->epsn)
		c->qp->owner->dev->counters.out_of_sequence++;
	if (!resp->dropping && c->pkt->psn == resp->epsn)
		return RESP_CHECK_OP;
	if (!(c->flags & ROCEMU_OPF_START))
		return drop(c, resp->dropping ? "rest of a lost message" : "PSN gap");
	/* A FIRST or ONLY starts a message at any PSN (IBTA 9.8.3.1). */
	message_abandon(c);
	resp->epsn = c->pkt->psn;
	return RESP_CHECK_OP;
}

static enum resp_state resp_check_op(struct resp_ctx *c)
{
	struct rocemu_rc_resp *resp = c->resp;
	uint16_t f = c->flags;
	uint16_t kind = resp->in_msg == RC_MSG_SEND ? ROCEMU_OPF_SEND : ROCEMU_OPF_WRITE;

	if (resp->in_msg != RC_MSG_NONE && (!(f & kind) || (f & ROCEMU_OPF_START))) {
		if (!(f & ROCEMU_OPF_START))
			return drop(c, "opcode out of sequence");
		message_abandon(c);	/* class D1: this one may be good */
	}
	if (resp->in_msg == RC_MSG_NONE && !(f & ROCEMU_OPF_START))
		return drop(c, "opcode out of sequence");
	if ((f & ROCEMU_OPF_WRITE) && !(c->qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE))
		return drop(c, "no remote write access");
	return RESP_CHECK_RESOURCE;
}

static enum resp_state resp_check_resource(struct resp_ctx *c)
{
	int err = rocemu_resp_recv_ready(c->qp, c->resp, c->flags);

	/* No RNR NAK on UC: the message is dropped (rxe). A broken queue is this side's fault. */
	c->err = RC_ERR_LOC_QP_OP;
	if (err)
		return err == -EAGAIN ? drop(c, "no receive WQE") : RESP_ERROR;
	if ((c->flags & ROCEMU_OPF_WRITE) && (c->flags & ROCEMU_OPF_START))
		return RESP_CHECK_RKEY;
	return RESP_EXECUTE;
}

static enum resp_state resp_check_rkey(struct resp_ctx *c)
{
	c->dma_err = rocemu_resp_write_begin(c->qp, c->resp,
					     rocemu_pkt_reth((uint8_t *)c->pkt->bth));
	return c->dma_err ? drop(c, "R_Key check failed") : RESP_EXECUTE;
}

/*
 * SEND data into the receive WQE: a fault there is this side's own (local
 * length, protection) and fails the QP. WRITE data past its RETH or its
 * key is the peer's fault: the message is dropped.
 */
static enum resp_state place(struct resp_ctx *c, const struct iovec *data)
{
	if (c->flags & ROCEMU_OPF_SEND) {
		c->dma_err = rocemu_resp_place_send(c->qp, c->resp, data, NULL);
		c->err = c->dma_err == -EMSGSIZE ? RC_ERR_LOC_LEN : RC_ERR_LOC_PROT;
		return c->dma_err ? RESP_ERROR : RESP_EXECUTE;
	}
	c->dma_err = rocemu_resp_place_write(c->qp, c->resp, data, NULL);
	return c->dma_err ? drop(c, "WRITE outside its RETH or R_Key") : RESP_EXECUTE;
}

static enum resp_state resp_execute(struct resp_ctx *c)
{
	struct rocemu_rc_resp *resp = c->resp;
	struct iovec data = { (void *)c->pkt->payload, c->pkt->paylen };
	bool end = c->flags & ROCEMU_OPF_END;
	enum resp_state next;

	/* Only the last packet of a message may be shorter than the MTU (IBTA C9-88). */
	if (!end && c->pkt->paylen != c->qp->path.mtu)
		return drop(c, "short packet inside a message");
	if (data.iov_len && (next = place(c, &data)) != RESP_EXECUTE)
		return next;
	if ((c->flags & ROCEMU_OPF_WRITE) && end && resp->write_left)
		return drop(c, "WRITE shorter than its RETH");
	resp->offset += c->pkt->paylen;
	resp->epsn = rocemu_psn_add(c->pkt->psn, 1);
	if (c->flags & ROCEMU_OPF_START)
		resp->in_msg = (c->flags & ROCEMU_OPF_SEND) ? RC_MSG_SEND : RC_MSG_WRITE;
	if (!end)
		return RESP_DONE;
	rocemu_resp_complete(c->qp, resp, c->pkt);
	return RESP_DONE;
}

static enum resp_state resp_drop(struct resp_ctx *c)
{
	if (c->dma_err == -ESRCH) {
		rocemu_client_gone(c->qp->owner);
		return RESP_DONE;
	}
	c->qp->owner->dev->counters.rx_uc_dropped++;
	if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x rx %s dropped: %s",
			   c->qp->owner->dev->name, c->qp->qpn, c->pkt->psn, c->pkt->info->name,
			   c->why);
	c->resp->in_msg = RC_MSG_NONE;
	c->resp->offset = 0;
	c->resp->dropping = true;
	return RESP_DONE;
}

static enum resp_state resp_error(struct resp_ctx *c)
{
	if (c->dma_err == -ESRCH) {
		rocemu_client_gone(c->qp->owner);
		return RESP_DONE;
	}
	rocemu_log(ROCEMU_LOG_INFO, "%s qp 0x%06x psn 0x%06x rx %s: %s (dma %s)",
		   c->qp->owner->dev->name, c->qp->qpn, c->pkt->psn, c->pkt->info->name,
		   rocemu_rc_err_name(c->err), strerror(-c->dma_err));
	rocemu_resp_recv_fail(c->qp, c->resp, c->err);
	rocemu_rc_resp_error(c->qp, c->err);
	return RESP_DONE;
}

void rocemu_uc_resp_packet(struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	struct resp_ctx c = { .qp = qp, .resp = &qp->rc.resp, .pkt = pkt,
			      .flags = pkt->info->flags };
	enum resp_state state = RESP_CHECK_PSN;

	if (!rocemu_rc_resp_active(qp))
		return;
	rocemu_rc_qp_rx(qp);
	while (state != RESP_DONE) {
		if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
			rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x uc resp %s",
				   qp->owner->dev->name, qp->qpn, pkt->psn, resp_state_names[state]);
		switch (state) {
		case RESP_CHECK_PSN:
			state = resp_check_psn(&c);
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
		case RESP_DROP:
			state = resp_drop(&c);
			break;
		case RESP_ERROR:
			state = resp_error(&c);
			break;
		case RESP_DONE:
			break;
		}
	}
}
