/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "tests/e2e/raw/raw_port.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ibv_qp *raw_qp_create(struct dev *d, struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
			     uint16_t max_tso_header)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.send_cq = send_cq,
		.recv_cq = recv_cq,
		.cap = { .max_send_wr = 64, .max_recv_wr = RAW_RX_DEPTH, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 0 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = d->pd,
	};

	if (max_tso_header) {
		attr.comp_mask |= IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
		attr.max_tso_header = max_tso_header;
	}
	return ibv_create_qp_ex(d->ctx, &attr);
}

int raw_qp_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int err = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PORT);

	attr.qp_state = IBV_QPS_RTR;
	if (!err)
		err = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	attr.qp_state = IBV_QPS_RTS;
	if (!err)
		err = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	return err;
}

/* Receive slot i posted again. */
static bool post_slot(struct raw_port *p, uint64_t i)
{
	struct ibv_sge sge = sge_of(p->rx, i * RAW_SLOT, RAW_SLOT);
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;
	int err = ibv_post_recv(p->qp, &wr, &bad);

	if (err)
		check(false, "%s: ibv_post_recv: %s", p->dev->name, strerror(err));
	return !err;
}

bool raw_port_open(struct raw_port *p, struct dev *d, uint16_t max_tso_header)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->dev = d;
	/* GID 0 is ::ffff:a.b.c.d; the port's MAC 02:00:a:b:c:d. */
	memcpy(&p->addr, &d->gid.raw[12], 4);
	p->mac[0] = 0x02;
	memcpy(&p->mac[2], &d->gid.raw[12], 4);
	p->send_cq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
	p->recv_cq_ex = ibv_create_cq_ex(d->ctx, &(struct ibv_cq_init_attr_ex){
		.cqe = RAW_RX_DEPTH,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_FLOW_TAG,
	});
	p->recv_cq = p->recv_cq_ex ? ibv_cq_ex_to_cq(p->recv_cq_ex) : NULL;
	if (!p->send_cq || !p->recv_cq) {
		check(false, "%s: ibv_create_cq: %s", d->name, strerror(errno));
		return false;
	}
	p->tx = buf_new(d, RAW_TX_BYTES, RAW_TX_BYTES, IBV_ACCESS_LOCAL_WRITE, 0);
	p->rx = buf_new(d, RAW_SLOT * RAW_RX_DEPTH, RAW_SLOT * RAW_RX_DEPTH, IBV_ACCESS_LOCAL_WRITE, 0);
	if (!p->tx || !p->rx)
		return false;
	p->qp = raw_qp_create(d, p->send_cq, p->recv_cq, max_tso_header);
	if (!p->qp) {
		check(false, "%s: ibv_create_qp_ex RAW_PACKET: %s", d->name, strerror(errno));
		return false;
	}
	err = raw_qp_to_rts(p->qp);
	if (err) {
		check(false, "%s: RAW_PACKET QP to RTS: %s", d->name, strerror(err));
		return false;
	}
	for (uint64_t i = 0; i < RAW_RX_DEPTH; i++)
		if (!post_slot(p, i))
			return false;
	return true;
}

void raw_port_close(struct raw_port *p)
{
	if (p->qp)
		ibv_destroy_qp(p->qp);
	if (p->send_cq)
		ibv_destroy_cq(p->send_cq);
	if (p->recv_cq)
		ibv_destroy_cq(p->recv_cq);
	memset(p, 0, sizeof(*p));
}

struct ibv_flow *raw_flow_to_mac(struct ibv_qp *qp, const uint8_t *mac)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} rule = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(rule), .num_of_specs = 1, .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(struct ibv_flow_spec_eth) },
	};

	memcpy(rule.eth.val.dst_mac, mac, ETH_ALEN);
	memset(rule.eth.mask.dst_mac, 0xff, ETH_ALEN);
	return ibv_create_flow(qp, &rule.attr);
}

int raw_post_wait(struct raw_port *p, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int err;

	wr->send_flags |= IBV_SEND_SIGNALED;
	err = ibv_post_send(p->qp, wr, &bad);
	if (err) {
		check(false, "%s: ibv_post_send: %s", p->dev->name, strerror(err));
		return -1;
	}
	if (poll_wc(p->send_cq, &wc, RAW_WAIT_MS) != 1) {
		check(false, "%s: no send completion", p->dev->name);
		return -1;
	}
	return wc.status;
}

int raw_send(struct raw_port *p, const void *frame, size_t len, unsigned int send_flags)
{
	struct ibv_sge sge = sge_of(p->tx, 0, len);
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = send_flags };

	memcpy(p->tx->p, frame, len);
	return raw_post_wait(p, &wr);
}

/* The next receive completion within ms into wc and *flow_tag: 1, 0 when none came, -1 on error. */
static int poll_rx(struct raw_port *p, struct ibv_wc *wc, uint32_t *flow_tag, unsigned int ms)
{
	struct ibv_poll_cq_attr attr = {};
	struct timespec start;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while ((err = ibv_start_poll(p->recv_cq_ex, &attr)) == ENOENT) {
		if (elapsed_ms(&start) >= (long)ms)
			return 0;
		usleep(20);	/* leave the CPU to the daemon on a small machine */
	}
	if (err) {
		check(false, "%s: ibv_start_poll: %s", p->dev->name, strerror(err));
		return -1;
	}
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = p->recv_cq_ex->wr_id;
	wc->status = p->recv_cq_ex->status;
	wc->byte_len = ibv_wc_read_byte_len(p->recv_cq_ex);
	wc->wc_flags = ibv_wc_read_wc_flags(p->recv_cq_ex);
	*flow_tag = ibv_wc_read_flow_tag(p->recv_cq_ex);
	ibv_end_poll(p->recv_cq_ex);
	return 1;
}

int raw_recv(struct raw_port *p, struct ibv_wc *wc, uint32_t *flow_tag, uint8_t *out, unsigned int ms)
{
	uint32_t tag;
	int got = poll_rx(p, wc, flow_tag ? flow_tag : &tag, ms);

	if (got != 1)
		return got;
	if (wc->status == IBV_WC_SUCCESS && wc->byte_len <= RAW_SLOT)
		memcpy(out, p->rx->p + wc->wr_id * RAW_SLOT, wc->byte_len);
	return post_slot(p, wc->wr_id) ? 1 : -1;
}
