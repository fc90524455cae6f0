/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A DCT: RC's responder for every DCI that presents its access key. Each
 * connection of a DCI (its address, QPN and connection number, RDETH) has
 * a responder context and a path back; the one a request belongs to is
 * loaded into the QP (qp->rc.resp, qp->path, dest_qp_num) before RC's
 * responder runs, so PSN checks, duplicates, RNR, READ responses and
 * atomics are RC's, per DCI connection. A request marked "connect" opens
 * a connection (a new context, or a DCI's old one started again); any
 * other request of a connection the DCT does not know is dropped.
 */
#include "emulator/dc/dc.h"

#include <stdlib.h>
#include <string.h>

#include "emulator/engine/transport.h"
#include "emulator/obj/qp.h"
#include "net/roce/roce_hdr.h"
#include "rocemu/log.h"

/* Put the loaded context back (what RC's responder changed goes with it). */
static void conn_unload(struct rocemu_qp *qp)
{
	struct rocemu_dct_conn *a = qp->dc.active;

	if (!a)
		return;
	a->resp = qp->rc.resp;
	a->path = qp->path;
	qp->path.holds_sport = false;	/* the context holds its port */
	qp->dc.active = NULL;
}

static void conn_load(struct rocemu_qp *qp, struct rocemu_dct_conn *conn)
{
	if (qp->dc.active == conn)
		return;
	conn_unload(qp);
	qp->rc.resp = conn->resp;
	qp->path = conn->path;
	qp->attr.dest_qp_num = conn->dci_qpn;
	qp->dc.active = conn;
}

static void conn_free(struct rocemu_qp *qp, struct rocemu_dct_conn *conn)
{
	if (qp->dc.active == conn)
		conn_unload(qp);
	rocemu_path_release(qp->owner->dev, &conn->path);
	free(conn->resp.mem);	/* its READ and atomic memory (rc.h) */
	conn->resp.mem = NULL;
	conn->used = false;
}

/* The context of the DCI at saddr, qpn, or NULL. */
static struct rocemu_dct_conn *conn_find(struct rocemu_qp *qp, uint32_t saddr, uint32_t qpn)
{
	struct rocemu_dct_conn *c = qp->dc.conns;

	for (; c < qp->dc.conns + ROCEMU_DCT_CONNS; c++)
		if (c->used && c->saddr == saddr && c->dci_qpn == qpn)
			return c;
	return NULL;
}

/* A free context, else the least recently used one that owes nothing, else NULL. */
static struct rocemu_dct_conn *conn_alloc(struct rocemu_qp *qp)
{
	struct rocemu_dct_conn *c, *lru = NULL;

	for (c = qp->dc.conns; c < qp->dc.conns + ROCEMU_DCT_CONNS; c++) {
		if (!c->used)
			return c;
		if (c != qp->dc.active && c->resp.res_tail == c->resp.res_head &&
		    (!lru || c->last_rx < lru->last_rx))
			lru = c;
	}
	if (lru)
		conn_free(qp, lru);
	return lru;
}

/*
 * A connection starts at psn: a context of its own, at RC's responder's
 * start (a receive WQE a broken message took stays, to be filled again).
 */
static void conn_start(struct rocemu_qp *qp, struct rocemu_dct_conn *conn, uint32_t saddr,
		       uint32_t qpn, uint32_t number, uint32_t psn)
{
	struct rocemu_rc_resp *resp;
	bool fresh = !conn->used;

	if (fresh) {
		memset(conn, 0, sizeof(*conn));
		conn->used = true;
		conn->saddr = saddr;
		conn->dci_qpn = qpn;
	}
	conn_load(qp, conn);
	if (fresh) {
		memset(&qp->rc.resp, 0, sizeof(qp->rc.resp));
		rocemu_qp_path_to(qp, saddr, qpn);
	}
	resp = &qp->rc.resp;
	resp->epsn = psn;
	resp->nak_sent = false;
	resp->in_msg = RC_MSG_NONE;
	resp->offset = 0;
	resp->res_tail = resp->res_head;	/* owed to the old connection: it has gone */
	conn->conn = number;
	qp->owner->dev->counters.rx_dct_connect++;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x: DCI 0x%06x connection %u",
		   qp->owner->dev->name, qp->qpn, psn, qpn, number);
}

/* Load the context the request pkt belongs to: false when it has none (dropped). */
static bool conn_select(struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	uint8_t *bth = (uint8_t *)pkt->bth;
	const uint8_t *rdeth = rocemu_pkt_rdeth(bth);
	uint32_t qpn = rocemu_deth_src_qp(rocemu_pkt_deth(bth));
	uint32_t number = rocemu_rdeth_eecn(rdeth);
	struct rocemu_dct_conn *conn = conn_find(qp, pkt->saddr, qpn);

	if (conn && conn->conn == number) {
		conn_load(qp, conn);
		return true;
	}
	if (!rocemu_rdeth_dc_connect(rdeth))
		return false;
	if (!conn)
		conn = conn_alloc(qp);
	if (!conn)
		return false;
	conn_start(qp, conn, pkt->saddr, qpn, number, pkt->psn);
	return true;
}

void rocemu_dct_rx(struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	struct rocemu_device *dev = qp->owner->dev;
	const char *why = NULL;

	if (!(pkt->info->flags & ROCEMU_OPF_REQ)) {
		why = "a response to a DCT";
	} else if (rocemu_dceth_key(rocemu_pkt_dceth((uint8_t *)pkt->bth)) != qp->dc.access_key) {
		/* As a Q_Key violation (IBTA 10.2.4): silently dropped, counted. */
		dev->counters.rx_dc_key_violations++;
		why = "wrong DC access key";
	} else if (!rocemu_rc_resp_active(qp) || !conn_select(qp, pkt)) {
		why = "no connection of its DCI";
	}
	if (why) {
		dev->rx_dropped++;
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x rx %s: %s, dropped", dev->name,
			   qp->qpn, pkt->psn, pkt->info->name, why);
		return;
	}
	qp->dc.active->last_rx = ++qp->dc.requests;
	rocemu_rc_resp_packet(qp, pkt);
}

void rocemu_dct_conn_fail(struct rocemu_qp *qp, enum rocemu_rc_err err)
{
	struct rocemu_dct_conn *conn = qp->dc.active;

	rocemu_log(ROCEMU_LOG_INFO, "%s qp 0x%06x: DCI 0x%06x connection ends: %s",
		   qp->owner->dev->name, qp->qpn, qp->attr.dest_qp_num, rocemu_rc_err_name(err));
	if (conn)
		conn_free(qp, conn);
	/* What it owed goes with it; the other contexts' responses go on. */
	memset(&qp->rc.resp, 0, sizeof(qp->rc.resp));
}

void rocemu_dct_drain(struct rocemu_qp *qp)
{
	struct rocemu_dct_conn *c;

	for (c = qp->dc.conns; c < qp->dc.conns + ROCEMU_DCT_CONNS; c++) {
		if (!c->used)
			continue;
		if (c == qp->dc.active ? qp->rc.resp.res_tail == qp->rc.resp.res_head
				       : c->resp.res_tail == c->resp.res_head)
			continue;
		conn_load(qp, c);
		rocemu_rc_resp_drain(qp);
	}
}

void rocemu_dct_forget(struct rocemu_qp *qp)
{
	struct rocemu_dct_conn *c;

	if (!qp->dc.conns)
		return;
	for (c = qp->dc.conns; c < qp->dc.conns + ROCEMU_DCT_CONNS; c++)
		if (c->used)
			conn_free(qp, c);
	memset(&qp->rc.resp, 0, sizeof(qp->rc.resp));
}
