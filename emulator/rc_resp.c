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
 */
#include <errno.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "emulator/atomic.h"
#include "emulator/dma.h"
#include "emulator/pd_mr.h"
#include "emulator/qp.h"
#include "emulator/cqe.h"
#include "emulator/rc.h"
#include "net/roce_hdr.h"
#include "rocemu/log.h"

enum resp_state {
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
	RESP_ERROR,		/* NAK, CQE if a WQE was taken, QP to ERR */
	RESP_DONE,
};

static const char *const resp_state_names[] = {
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
	[RESP_ERROR] = "ERROR",
	[RESP_DONE] = "DONE",
};

struct resp_ctx {
	struct rocemu_qp *qp;
	struct rocemu_rc_resp *resp;
	const struct rocemu_pkt *pkt;
	uint16_t flags;		/* ROCEMU_OPF_* of the packet */
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
		if (rocemu_atomic_replay_find(c->resp, c->pkt->psn, &orig))
			rocemu_rc_send_atomic_ack(c->qp, c->pkt->psn, c->resp->msn, orig);
		return RESP_DONE;
	}
	if (rocemu_bth_ackreq(c->pkt->bth))
		rocemu_rc_send_ack(c->qp, rocemu_psn_add(c->resp->epsn, -1u), ack_syndrome(),
				   c->resp->msn);
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
	struct rocemu_rc_resp *resp = c->resp;
	uint16_t f = c->flags;
	bool needs_wqe = ((f & ROCEMU_OPF_SEND) && (f & ROCEMU_OPF_START)) ||
			 ((f & ROCEMU_OPF_WRITE) && (f & ROCEMU_OPF_IMM));

	if (needs_wqe && !resp->has_recv) {
		if (!c->qp->layout.rq_wqe_cnt ||
		    (uint16_t)resp->rq_ci == rocemu_wqe_rq_doorbell(c->qp))
			return RESP_ERR_RNR;
		rocemu_wqe_parse_recv(c->qp, resp->rq_ci, &resp->recv);
		resp->rq_ci++;
		resp->has_recv = true;
	}
	if (!rd_atomic_resources(c)) {
		c->err = RC_ERR_REM_INV_REQ;
		return RESP_ERROR;
	}
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
	const uint8_t *reth = pkt_reth(c);
	struct rocemu_rc_resp *resp = c->resp;
	uint64_t addr;

	resp->write_va = rocemu_reth_va(reth);
	resp->write_rkey = rocemu_reth_rkey(reth);
	resp->write_left = rocemu_reth_dma_len(reth);
	/* A zero-length WRITE touches no memory, so no key is checked (IBTA 9.4.4). */
	c->dma_err = resp->write_left ? rocemu_dma_rkey(c->qp, resp->write_rkey, resp->write_va,
						       resp->write_left, IBV_ACCESS_REMOTE_WRITE,
						       &addr) : 0;
	if (c->dma_err) {
		c->err = RC_ERR_REM_ACCESS;
		return RESP_ERROR;
	}
	return RESP_EXECUTE;
}

static int place_send(struct resp_ctx *c, const struct iovec *local)
{
	struct rocemu_rc_resp *resp = c->resp;
	struct iovec remote[ROCEMU_MAX_SGE];
	unsigned int n;
	int err;

	err = rocemu_dma_sgl(c->qp, resp->recv.sge, resp->recv.num_sge, resp->offset,
			     local->iov_len, IBV_ACCESS_LOCAL_WRITE, remote, ROCEMU_MAX_SGE, &n);
	if (!err)
		err = rocemu_dma_copy(c->qp->owner->pid, local, 1, remote, n, true);
	c->err = err == -EMSGSIZE ? RC_ERR_LOC_LEN : RC_ERR_LOC_PROT;
	c->dma_err = err;
	return err;
}

static int place_write(struct resp_ctx *c, const struct iovec *local)
{
	struct rocemu_rc_resp *resp = c->resp;
	struct iovec remote;
	uint64_t addr;
	int err;

	c->err = RC_ERR_REM_INV_REQ;
	if (local->iov_len > resp->write_left)
		return -EMSGSIZE;
	c->err = RC_ERR_REM_ACCESS;
	err = rocemu_dma_rkey(c->qp, resp->write_rkey, resp->write_va, local->iov_len,
			      IBV_ACCESS_REMOTE_WRITE, &addr);
	if (!err) {
		remote.iov_base = (void *)(uintptr_t)addr;
		remote.iov_len = local->iov_len;
		resp->write_va += local->iov_len;
		resp->write_left -= (uint32_t)local->iov_len;
		err = rocemu_dma_copy(c->qp->owner->pid, local, 1, &remote, 1, true);
	}
	c->dma_err = err;
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
		return RESP_ERROR;
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
	const uint8_t *imm = rocemu_pkt_immdt((uint8_t *)c->pkt->bth);
	const uint8_t *ieth = rocemu_pkt_ieth((uint8_t *)c->pkt->bth);
	struct rocemu_cqe_info info = {
		.op = (c->flags & ROCEMU_OPF_WRITE) ? MLX5_CQE_RESP_WR_IMM
			: imm ? MLX5_CQE_RESP_SEND_IMM : ieth ? MLX5_CQE_RESP_SEND_INV
			: MLX5_CQE_RESP_SEND,
		.qpn = c->qp->qpn,
		.wqe_counter = (uint16_t)resp->recv.counter,
		.byte_cnt = resp->offset,
		.src_qp = c->qp->attr.dest_qp_num,
		.solicited = rocemu_bth_se(c->pkt->bth),
	};

	if (ieth) {
		c->dma_err = rocemu_mr_invalidate(c->qp, rocemu_ieth_rkey(ieth));
		if (c->dma_err) {
			c->err = RC_ERR_REM_INV_REQ;
			return RESP_ERROR;
		}
	}
	resp->msn = rocemu_psn_add(resp->msn, 1);
	if (resp->has_recv) {
		if (imm)
			memcpy(&info.imm, imm, sizeof(info.imm));
		if (ieth)
			memcpy(&info.imm, ieth, sizeof(info.imm));
		rocemu_rc_cqe(c->qp, c->qp->recv_cq, &info);
		resp->has_recv = false;
	}
	resp->in_msg = RC_MSG_NONE;
	resp->offset = 0;
	return RESP_ACK;
}

static enum resp_state resp_ack(struct resp_ctx *c)
{
	if (rocemu_bth_ackreq(c->pkt->bth))
		rocemu_rc_send_ack(c->qp, c->pkt->psn, ack_syndrome(), c->resp->msn);
	return RESP_DONE;
}

static enum resp_state resp_read_reply(struct resp_ctx *c)
{
	const uint8_t *reth = pkt_reth(c);
	struct rocemu_rc_resp *resp = c->resp;
	struct rocemu_rc_msg m = {
		.ops = rocemu_rc_ops_read_resp,
		.psn = c->pkt->psn,
		.length = rocemu_reth_dma_len(reth),
		.src = RC_SRC_MR,
		.syndrome = ack_syndrome(),
	};
	uint32_t sent;

	c->err = RC_ERR_REM_ACCESS;
	c->dma_err = m.length ? rocemu_dma_rkey(c->qp, rocemu_reth_rkey(reth), rocemu_reth_va(reth),
						m.length, IBV_ACCESS_REMOTE_READ, &m.mr_addr) : 0;
	if (c->dma_err)
		return RESP_ERROR;
	if (!c->duplicate) {
		resp->epsn = rocemu_psn_add(resp->epsn, rocemu_rc_npkts(c->qp, m.length));
		resp->msn = rocemu_psn_add(resp->msn, 1);
	}
	m.msn = resp->msn;
	c->err = RC_ERR_REM_OP;
	c->dma_err = rocemu_rc_send_msg(c->qp, &m, 0, UINT32_MAX, &sent);
	if (c->dma_err)
		return RESP_ERROR;
	return RESP_DONE;
}

static enum resp_state resp_atomic(struct resp_ctx *c)
{
	struct rocemu_rc_resp *resp = c->resp;
	uint64_t orig;

	c->dma_err = rocemu_atomic_execute(c->qp, rocemu_pkt_atmeth((uint8_t *)c->pkt->bth),
					   c->pkt->opcode == ROCEMU_OP_RC_COMPARE_SWAP, &orig);
	if (c->dma_err) {
		c->err = c->dma_err == -EINVAL ? RC_ERR_REM_INV_REQ : RC_ERR_REM_ACCESS;
		return RESP_ERROR;
	}
	rocemu_atomic_replay_save(resp, c->qp->attr.max_dest_rd_atomic, c->pkt->psn, orig);
	resp->epsn = rocemu_psn_add(resp->epsn, 1);
	resp->msn = rocemu_psn_add(resp->msn, 1);
	rocemu_rc_send_atomic_ack(c->qp, c->pkt->psn, resp->msn, orig);
	return RESP_DONE;
}

static enum resp_state resp_err_seq(struct resp_ctx *c)
{
	if (!c->resp->nak_sent) {
		c->resp->nak_sent = true;
		rocemu_rc_send_ack(c->qp, c->resp->epsn,
				   rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK,
							     ROCEMU_NAK_PSN_SEQ_ERROR),
				   c->resp->msn);
	}
	return RESP_DONE;
}

static enum resp_state resp_err_rnr(struct resp_ctx *c)
{
	rocemu_rc_send_ack(c->qp, c->pkt->psn,
			   rocemu_aeth_syndrome_make(ROCEMU_AETH_RNR_NAK,
						     c->qp->attr.min_rnr_timer),
			   c->resp->msn);
	return RESP_DONE;
}

static enum resp_state resp_error(struct resp_ctx *c)
{
	struct rocemu_rc_resp *resp = c->resp;
	int nak = rocemu_rc_err_nak(c->err);
	struct rocemu_cqe_info info = {
		.op = MLX5_CQE_RESP_ERR,
		.syndrome = rocemu_rc_err_syndrome(c->err),
		.qpn = c->qp->qpn,
		.wqe_counter = (uint16_t)resp->recv.counter,
	};

	/* A host that lost its process answers nothing: the requester's retries run out. */
	if (c->dma_err == -ESRCH) {
		rocemu_client_gone(c->qp->owner);
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

	rocemu_log(ROCEMU_LOG_INFO, "%s qp 0x%06x psn 0x%06x rx %s: %s (dma %s)",
		   c->qp->owner->dev->name, c->qp->qpn, c->pkt->psn, c->pkt->info->name,
		   rocemu_rc_err_name(c->err), c->dma_err ? strerror(-c->dma_err) : "-");
	if (nak >= 0)
		rocemu_rc_send_ack(c->qp, c->pkt->psn,
				   rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, (uint8_t)nak),
				   resp->msn);
	if (resp->has_recv) {
		rocemu_rc_cqe(c->qp, c->qp->recv_cq, &info);
		resp->has_recv = false;
	}
	rocemu_rc_resp_error(c->qp, c->err);
	return RESP_DONE;
}

void rocemu_rc_resp_packet(struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	struct resp_ctx c = { .qp = qp, .resp = &qp->rc.resp, .pkt = pkt,
			      .flags = pkt->info->flags };
	enum resp_state state = RESP_CHECK_PSN;

	if ((qp->attr.qp_state != IBV_QPS_RTR && !rocemu_rc_sq_active(qp)) || qp->owner->gone)
		return;
	rocemu_rc_qp_rx(qp);
	while (state != RESP_DONE) {
		if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
			rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x resp %s",
				   qp->owner->dev->name, qp->qpn, pkt->psn, resp_state_names[state]);
		switch (state) {
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
		case RESP_ERROR:
			state = resp_error(&c);
			break;
		case RESP_DONE:
			break;
		}
	}
}
