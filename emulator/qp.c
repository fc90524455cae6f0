/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/qp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emulator/cq.h"
#include "emulator/pd_mr.h"
#include "emulator/qp_layout.h"
#include "emulator/qp_state.h"
#include "rocemu/log.h"

const char *rocemu_qp_type_name(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return "RC";
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_UD:
		return "UD";
	case IBV_QPT_RAW_PACKET:
		return "RAW_PACKET";
	case IBV_QPT_XRC_SEND:
		return "XRC_SEND";
	case IBV_QPT_XRC_RECV:
		return "XRC_RECV";
	case IBV_QPT_DRIVER:
		return "DRIVER";
	default:
		return "?";
	}
}

static int qp_type_check(uint32_t type)
{
	switch (type) {
	case IBV_QPT_RC:
		return 0;
	case IBV_QPT_UC:
	case IBV_QPT_UD:
	case IBV_QPT_RAW_PACKET:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
	case IBV_QPT_DRIVER:
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
}

int rocemu_qp_create(struct rocemu_client *c, const struct rocemu_create_qp_req *req,
		     struct rocemu_create_qp_resp *resp, int *fd)
{
	struct rocemu_pd *pd;
	struct rocemu_cq *send_cq, *recv_cq;
	struct rocemu_qp *qp;
	int err, ring_fd;

	err = qp_type_check(req->qp_type);
	if (err)
		return err;
	pd = rocemu_pd_lookup(c, req->pdn);
	send_cq = rocemu_cq_lookup(c, req->send_cqn);
	recv_cq = rocemu_cq_lookup(c, req->recv_cqn);
	/* No SRQ exists yet (max_srq 0), so any SRQ handle is foreign. */
	if (!pd || !send_cq || !recv_cq || req->srqn != ROCEMU_NO_HANDLE)
		return -EINVAL;
	memset(resp, 0, sizeof(*resp));
	err = rocemu_qp_layout(&req->cap, &resp->cap, &resp->layout);
	if (err)
		return err;
	if (c->dev->num_qp >= ROCEMU_MAX_QP)
		return -ENOMEM;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	err = rocemu_idtable_alloc(&c->emu->qps, qp, &qp->qpn);
	if (err)
		goto fail;
	ring_fd = rocemu_shm_create("rocemu-qp", resp->layout.size, &qp->rings);
	if (ring_fd < 0) {
		err = ring_fd;
		rocemu_idtable_remove(&c->emu->qps, qp->qpn);
		goto fail;
	}
	resp->layout.qpn = qp->qpn;
	qp->layout = resp->layout;
	err = rocemu_rc_qp_init(qp);
	if (err) {
		rocemu_shm_destroy(&qp->rings);
		close(ring_fd);
		rocemu_idtable_remove(&c->emu->qps, qp->qpn);
		goto fail;
	}
	qp->owner = c;
	qp->type = req->qp_type;
	qp->pd = pd;
	qp->send_cq = send_cq;
	qp->recv_cq = recv_cq;
	qp->sq_sig_all = req->sq_sig_all;
	qp->user_qp = req->user_qp;
	qp->cap = resp->cap;
	qp->layout = resp->layout;
	qp->attr.qp_state = IBV_QPS_RESET;
	pd->users++;
	send_cq->users++;
	recv_cq->users++;
	c->dev->num_qp++;
	rocemu_list_add_tail(&c->qps, &qp->node);
	*fd = ring_fd;
	rocemu_log(ROCEMU_LOG_DEBUG,
		   "%s qp 0x%06x create %s pd %u sq %u x %u rq %u x %u",
		   c->dev->name, qp->qpn, rocemu_qp_type_name(qp->type), pd->pdn,
		   qp->cap.max_send_wr, qp->cap.max_send_sge, qp->cap.max_recv_wr,
		   qp->cap.max_recv_sge);
	return 0;

fail:
	free(qp);
	return err;
}

struct rocemu_qp *rocemu_qp_lookup(struct rocemu_client *c, uint32_t qpn)
{
	struct rocemu_qp *qp = rocemu_idtable_get(&c->emu->qps, qpn);

	return qp && qp->owner == c ? qp : NULL;
}

int rocemu_qp_query(struct rocemu_client *c, const struct rocemu_query_qp_req *req,
		    struct rocemu_query_qp_resp *resp)
{
	struct rocemu_qp *qp = rocemu_qp_lookup(c, req->qpn);

	if (!qp)
		return -EINVAL;
	memset(resp, 0, sizeof(*resp));
	resp->attr = qp->attr;
	resp->attr.cur_qp_state = qp->attr.qp_state;
	resp->attr.cap = qp->cap;
	resp->attr.sq_draining = qp->rc.req.draining;
	resp->cap = qp->cap;
	resp->sq_sig_all = qp->sq_sig_all;
	resp->qp_type = qp->type;
	return 0;
}

void rocemu_qp_free(struct rocemu_emu *emu, struct rocemu_qp *qp)
{
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x destroy", qp->owner->dev->name, qp->qpn);
	rocemu_rc_qp_fini(qp);
	rocemu_idtable_remove(&emu->qps, qp->qpn);
	rocemu_list_del(&qp->node);
	qp->pd->users--;
	qp->send_cq->users--;
	qp->recv_cq->users--;
	qp->owner->dev->num_qp--;
	rocemu_shm_destroy(&qp->rings);
	free(qp);
}

int rocemu_qp_destroy(struct rocemu_client *c, uint32_t qpn)
{
	struct rocemu_qp *qp = rocemu_qp_lookup(c, qpn);

	if (!qp)
		return -EINVAL;
	rocemu_qp_free(c->emu, qp);
	return 0;
}
