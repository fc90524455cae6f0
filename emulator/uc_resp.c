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
#include <infiniband/mlx5dv.h>

#include "emulator/dma.h"
#include "emulator/qp.h"
#include "emulator/cqe.h"
#include "emulator/rc.h"
#include "emulator/uc.h"
#include "net/roce_hdr.h"
#include "rocemu/log.h"

enum resp_state {
	RESP_CHECK_PSN,		/* expected, or the start of a message */
	RESP_CHECK_OP,		/* continues the message in progress; the QP's access */
	RESP_CHECK_RESOURCE,	/* a receive WQE where the message needs one */
	RESP_CHECK_RKEY,	/* first packet of a WRITE: the whole range */
	RESP_EXECUTE,		/* place SEND or WRITE data */
	RESP_COMPLETE,		/* end of a message: CQE */
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
	[RESP_COMPLETE] = "COMPLETE",
	[RESP_DROP] = "DROP",
	[RESP_ERROR] = "ERROR",
	[RESP_DONE] = "DONE",
};

struct resp_ctx {
	struct rocemu_qp *qp;
	struct rocemu_rc_resp *resp;
	const struct rocemu_pkt *pkt;
	uint16_t flags;		/* ROCEMU_OPF_* of the packet */
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
	struct rocemu_rc_resp *resp = c->resp;
	uint16_t f = c->flags;
	bool needs_wqe = ((f & ROCEMU_OPF_SEND) && (f & ROCEMU_OPF_START)) ||
			 ((f & ROCEMU_OPF_WRITE) && (f & ROCEMU_OPF_IMM));

	if (needs_wqe && !resp->has_recv) {
		/* No RNR NAK on UC: the message is dropped (rxe). */
		if (!c->qp->layout.rq_wqe_cnt ||
		    (uint16_t)resp->rq_ci == rocemu_wqe_rq_doorbell(c->qp))
			return drop(c, "no receive WQE");
		rocemu_wqe_parse_recv(c->qp, resp->rq_ci, &resp->recv);
		resp->rq_ci++;
		resp->has_recv = true;
	}
	if ((f & ROCEMU_OPF_WRITE) && (f & ROCEMU_OPF_START))
		return RESP_CHECK_RKEY;
	return RESP_EXECUTE;
}

static enum resp_state resp_check_rkey(struct resp_ctx *c)
{
	const uint8_t *reth = rocemu_pkt_reth((uint8_t *)c->pkt->bth);
	struct rocemu_rc_resp *resp = c->resp;
	uint64_t addr;

	resp->write_va = rocemu_reth_va(reth);
	resp->write_rkey = rocemu_reth_rkey(reth);
	resp->write_left = rocemu_reth_dma_len(reth);
	/* A zero-length WRITE touches no memory, so no key is checked (IBTA 9.4.4). */
	c->dma_err = resp->write_left ? rocemu_dma_rkey(c->qp, resp->write_rkey, resp->write_va,
						       resp->write_left, IBV_ACCESS_REMOTE_WRITE,
						       &addr) : 0;
	return c->dma_err ? drop(c, "R_Key check failed") : RESP_EXECUTE;
}

/* Placement returns RESP_EXECUTE when done, else where the message goes. */

/* SEND data into the receive WQE: a fault here is this side's own (local length, protection). */
static enum resp_state place_send(struct resp_ctx *c, const struct iovec *local)
{
	struct rocemu_rc_resp *resp = c->resp;
	struct iovec remote[ROCEMU_MAX_SGE];
	unsigned int n;

	c->dma_err = rocemu_dma_sgl(c->qp, resp->recv.sge, resp->recv.num_sge, resp->offset,
				    local->iov_len, IBV_ACCESS_LOCAL_WRITE, remote, ROCEMU_MAX_SGE,
				    &n);
	if (!c->dma_err)
		c->dma_err = rocemu_dma_copy(c->qp->owner->pid, local, 1, remote, n, true);
	c->err = c->dma_err == -EMSGSIZE ? RC_ERR_LOC_LEN : RC_ERR_LOC_PROT;
	return c->dma_err ? RESP_ERROR : RESP_EXECUTE;
}

/* WRITE data: past the RETH's range or its key is the peer's fault, and dropped. */
static enum resp_state place_write(struct resp_ctx *c, const struct iovec *local)
{
	struct rocemu_rc_resp *resp = c->resp;
	struct iovec remote;
	uint64_t addr;

	if (local->iov_len > resp->write_left)
		return drop(c, "WRITE longer than its RETH");
	c->dma_err = rocemu_dma_rkey(c->qp, resp->write_rkey, resp->write_va, local->iov_len,
				     IBV_ACCESS_REMOTE_WRITE, &addr);
	if (c->dma_err)
		return drop(c, "R_Key check failed");
	remote.iov_base = (void *)(uintptr_t)addr;
	remote.iov_len = local->iov_len;
	resp->write_va += local->iov_len;
	resp->write_left -= (uint32_t)local->iov_len;
	c->dma_err = rocemu_dma_copy(c->qp->owner->pid, local, 1, &remote, 1, true);
	c->err = RC_ERR_LOC_PROT;
	return c->dma_err ? RESP_ERROR : RESP_EXECUTE;
}

static enum resp_state resp_execute(struct resp_ctx *c)
{
	struct rocemu_rc_resp *resp = c->resp;
	struct iovec local = { (void *)c->pkt->payload, c->pkt->paylen };
	bool end = c->flags & ROCEMU_OPF_END;
	enum resp_state next;

	/* Only the last packet of a message may be shorter than the MTU (IBTA C9-88). */
	if (!end && c->pkt->paylen != c->qp->path.mtu)
		return drop(c, "short packet inside a message");
	if (local.iov_len) {
		next = (c->flags & ROCEMU_OPF_SEND) ? place_send(c, &local) : place_write(c, &local);
		if (next != RESP_EXECUTE)
			return next;
	}
	if ((c->flags & ROCEMU_OPF_WRITE) && end && resp->write_left)
		return drop(c, "WRITE shorter than its RETH");
	resp->offset += c->pkt->paylen;
	resp->epsn = rocemu_psn_add(c->pkt->psn, 1);
	if (c->flags & ROCEMU_OPF_START)
		resp->in_msg = (c->flags & ROCEMU_OPF_SEND) ? RC_MSG_SEND : RC_MSG_WRITE;
	return end ? RESP_COMPLETE : RESP_DONE;
}

static enum resp_state resp_complete(struct resp_ctx *c)
{
	struct rocemu_rc_resp *resp = c->resp;
	const uint8_t *imm = rocemu_pkt_immdt((uint8_t *)c->pkt->bth);
	struct rocemu_cqe_info info = {
		.op = (c->flags & ROCEMU_OPF_WRITE) ? MLX5_CQE_RESP_WR_IMM
			: imm ? MLX5_CQE_RESP_SEND_IMM : MLX5_CQE_RESP_SEND,
		.qpn = c->qp->qpn,
		.wqe_counter = (uint16_t)resp->recv.counter,
		.byte_cnt = resp->offset,
		.src_qp = c->qp->attr.dest_qp_num,
		.solicited = rocemu_bth_se(c->pkt->bth),
	};

	if (resp->has_recv) {
		if (imm)
			memcpy(&info.imm, imm, sizeof(info.imm));
		rocemu_rc_cqe(c->qp, c->qp->recv_cq, &info);
		resp->has_recv = false;
	}
	resp->in_msg = RC_MSG_NONE;
	resp->offset = 0;
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
	struct rocemu_cqe_info info = {
		.op = MLX5_CQE_RESP_ERR,
		.syndrome = rocemu_rc_err_syndrome(c->err),
		.qpn = c->qp->qpn,
		.wqe_counter = (uint16_t)c->resp->recv.counter,
	};

	if (c->dma_err == -ESRCH) {
		rocemu_client_gone(c->qp->owner);
		return RESP_DONE;
	}
	rocemu_log(ROCEMU_LOG_INFO, "%s qp 0x%06x psn 0x%06x rx %s: %s (dma %s)",
		   c->qp->owner->dev->name, c->qp->qpn, c->pkt->psn, c->pkt->info->name,
		   rocemu_rc_err_name(c->err), strerror(-c->dma_err));
	if (c->resp->has_recv) {
		rocemu_rc_cqe(c->qp, c->qp->recv_cq, &info);
		c->resp->has_recv = false;
	}
	rocemu_rc_resp_error(c->qp, c->err);
	return RESP_DONE;
}

void rocemu_uc_resp_packet(struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	struct resp_ctx c = { .qp = qp, .resp = &qp->rc.resp, .pkt = pkt,
			      .flags = pkt->info->flags };
	enum resp_state state = RESP_CHECK_PSN;

	if ((qp->attr.qp_state != IBV_QPS_RTR && !rocemu_rc_sq_active(qp)) || qp->owner->gone)
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
		case RESP_COMPLETE:
			state = resp_complete(&c);
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
