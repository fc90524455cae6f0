/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A DCI: RC's requester and completer, connected to one DCT at a time.
 * A WQE for the DCT (and stream) of the moment goes at once; one for
 * another waits until everything in flight completed, then the DCI
 * connects: the DCT's address, number and key become its peer, and its
 * next PSN opens a connection with a new number (RDETH), so the DCT
 * knows where this DCI's requests start (dct.c). PSNs go on across
 * connections. With DCI streams (mlx5dv_dci_streams) an error fails its
 * stream only: its WQEs complete with the error or WR_FLUSH_ERR, later
 * ones of that stream are flushed until mlx5dv_dci_stream_id_reset, and
 * the other streams go on. Streams take turns: one stream's WQEs are in
 * flight at a time.
 */
#include "emulator/dc/dc.h"

#include <errno.h>
#include <string.h>

#include "emulator/core/emu.h"
#include "emulator/engine/transport.h"
#include "emulator/ring/format.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/qp_timer.h"
#include "net/roce/roce_hdr.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

/* Connection numbers go on across the daemon's DCIs: a DCT never takes an old one for new. */
static uint32_t next_connection(void)
{
	static uint32_t n;

	if (!n)
		n = (uint32_t)rocemu_now_ns();
	n = (n + 1) & ROCEMU_QPN_MASK;
	return n;
}

static uint16_t wqe_stream(const struct rocemu_qp *qp, uint16_t stream)
{
	/* A DCI without streams has one: mlx5 writes whatever the caller gave. */
	return qp->dc->log_concurrent ? stream : 0;
}

/* Where stream is among the DCI's streams in error, or -1. */
static int errored_at(const struct rocemu_qp *qp, uint16_t stream)
{
	for (uint32_t i = 0; i < qp->dc->nerrored; i++)
		if (qp->dc->errored[i] == stream)
			return (int)i;
	return -1;
}

enum rocemu_rc_fetch rocemu_dci_route(struct rocemu_qp *qp, uint32_t bb)
{
	struct rocemu_rc_req *req = &qp->rc->req;
	struct rocemu_send_dest dest;
	uint32_t daddr, dctn;
	uint64_t key;
	uint16_t stream;

	qp->owner->dev->format->peek_dc(qp, bb, &dest, &stream);
	memcpy(&daddr, dest.rgid + 12, sizeof(daddr));	/* ::ffff:a.b.c.d */
	dctn = dest.dqpn;
	key = dest.dc_key;
	stream = wqe_stream(qp, stream);
	if (qp->dc->connected && daddr == qp->dc->daddr && dctn == qp->dc->dctn &&
	    key == qp->rc->dc_key && stream == qp->dc->stream)
		return ROCEMU_RC_FETCH_GO;
	if (req->tail != req->head)
		return ROCEMU_RC_FETCH_WAIT;
	qp->dc->stream = stream;
	if (errored_at(qp, stream) >= 0)
		return ROCEMU_RC_FETCH_FLUSH;
	qp->dc->connected = true;
	qp->dc->daddr = daddr;
	qp->dc->dctn = dctn;
	qp->rc->dc_key = key;
	qp->rc->dc_conn = next_connection();
	qp->rc->dc_connect_psn = req->next_psn;
	qp->attr.dest_qp_num = dctn;
	rocemu_qp_path_to(qp, daddr, dctn);
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x: connection %u to DCT 0x%06x stream %u",
		   qp->owner->dev->name, qp->qpn, req->next_psn, qp->rc->dc_conn, dctn, stream);
	return ROCEMU_RC_FETCH_GO;
}

bool rocemu_dci_stream_fail(struct rocemu_qp *qp, uint32_t pos, enum rocemu_rc_err err)
{
	struct rocemu_rc_req *req = &qp->rc->req;

	if (!qp->dc->log_concurrent || pos - req->tail >= req->head - req->tail)
		return false;
	if (err != RC_ERR_WR_FLUSH && errored_at(qp, qp->dc->stream) < 0) {
		/* The DCI fails once the streams in error reach log_num_errored's. */
		if (qp->dc->nerrored + 1 >= (1u << qp->dc->log_errored))
			return false;
		qp->dc->errored[qp->dc->nerrored++] = qp->dc->stream;
	}
	rocemu_log(ROCEMU_LOG_INFO, "%s qp 0x%06x stream %u: %s, the stream is in error",
		   qp->owner->dev->name, qp->qpn, qp->dc->stream, rocemu_rc_err_name(err));
	/* Everything in flight is of this stream: CQEs in SQ order. */
	for (; req->tail != req->head; req->tail++)
		rocemu_rc_complete_send(qp, &req->fifo[req->tail & req->fifo_mask],
					req->tail == pos ? err : RC_ERR_WR_FLUSH);
	rocemu_rc_req_timers_cancel(qp);
	req->cursor = req->head;
	req->reads_out = 0;
	req->retries = 0;
	req->rnr_retries = 0;
	req->gap_rewound = false;
	/* The next connection starts past every PSN this one sent. */
	req->next_psn = req->una_psn = req->cursor_psn = req->sent_psn;
	qp->dc->connected = false;
	/* The other streams go on, from the loop's next turn. */
	rocemu_qp_timer_arm(qp, ROCEMU_QP_TIMER_TX, rocemu_now_ns());
	return true;
}

int rocemu_dci_stream_reset(struct rocemu_qp *qp, uint16_t stream)
{
	int at;

	if (qp->type != ROCEMU_QPT_DCI || !qp->dc->log_concurrent)
		return -EINVAL;
	/* The firmware refuses (RTS2RTS_QP) to reset a stream that is not in error. */
	at = errored_at(qp, stream);
	if (at < 0)
		return -EINVAL;
	qp->dc->errored[at] = qp->dc->errored[--qp->dc->nerrored];
	rocemu_log(ROCEMU_LOG_INFO, "%s qp 0x%06x stream %u: reset, %u streams in error",
		   qp->owner->dev->name, qp->qpn, stream, qp->dc->nerrored);
	qp->ops->post(qp);
	return 0;
}

void rocemu_dci_rx(struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	if ((pkt->info->flags & ROCEMU_OPF_REQ) || !qp->dc->connected ||
	    pkt->saddr != qp->path.flow.daddr) {
		qp->owner->dev->rx_dropped++;
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x rx %s: not from its DCT, dropped",
			   qp->owner->dev->name, qp->qpn, pkt->psn, pkt->info->name);
		return;
	}
	rocemu_rc_comp_packet(qp, pkt);
}
