/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What RAW_PACKET puts on the port: per send WQE the frame its Ethernet
 * segment's inline header and its data make, with the checksums
 * IBV_SEND_IP_CSUM asks filled, or with TSO the frames of mss bytes of
 * payload each (raw_tso.c), handed to the port's switch. A frame over the
 * port's MTU and L2 header without TSO, a TSO without mss or header, or
 * data that cannot be read fail the WQE with an error CQE, as on a
 * ConnectX; a frame shorter than Ethernet's least is padded, as a NIC does.
 */
#include <errno.h>
#include <linux/if_ether.h>
#include <string.h>

#include "emulator/engine/dgram_qp.h"
#include "emulator/engine/transport.h"
#include "emulator/engine/wqe_gather.h"
#include "emulator/eth/eth.h"
#include "emulator/obj/qp.h"
#include "emulator/raw/raw.h"
#include "net/eth/eth_frame.h"
#include "net/eth/inet_csum.h"
#include "rocemu/log.h"

/* The largest port MTU a device is given, the frame's L2 header and room for Ethernet's least. */
#define RAW_STAGE_MAX (UINT16_MAX + ROCEMU_ETH_HLEN + ROCEMU_VLAN_HLEN + ETH_ZLEN)

/* One WQE's frame is built here: the daemon is single-threaded. */
static uint8_t stage[RAW_STAGE_MAX];

uint32_t rocemu_raw_frame_max(const struct rocemu_device *dev)
{
	return dev->netdev_mtu + ROCEMU_ETH_HLEN + ROCEMU_VLAN_HLEN;
}

void rocemu_raw_frame_out(struct rocemu_qp *qp, uint8_t *frame, uint32_t len, bool l3_csum,
			  bool l4_csum)
{
	struct rocemu_device *dev = qp->owner->dev;
	struct rocemu_eth_frame f;

	if (len < ETH_ZLEN) {
		memset(frame + len, 0, ETH_ZLEN - len);
		len = ETH_ZLEN;
	}
	if ((l3_csum || l4_csum) && rocemu_eth_parse(&f, frame, len))
		rocemu_csum_fill(frame, &f, l3_csum, l4_csum);
	dev->counters.raw_tx_frames++;
	if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x tx frame of %u bytes", dev->name, qp->qpn,
			   len);
	rocemu_eth_tx(dev, frame, len);
}

/* w's header and data into stage; IBV_WC_SUCCESS or the status the gather fails with. */
static enum ibv_wc_status frame_gather(const struct rocemu_qp *qp, const struct rocemu_send_wqe *w)
{
	struct iovec local = { stage + w->eth.hdr_len, w->length };
	int err;

	memcpy(stage, w->eth.hdr, w->eth.hdr_len);
	err = w->length ? rocemu_wqe_gather(qp, w, 0, w->length, &local, 1) : 0;
	if (err)
		return err == -EMSGSIZE ? IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_PROT_ERR;
	return IBV_WC_SUCCESS;
}

/* Send w; IBV_WC_SUCCESS or the status it fails with. */
static enum ibv_wc_status send_wqe(struct rocemu_qp *qp, const struct rocemu_send_wqe *w)
{
	bool tso = rocemu_ring_wqe_op(qp->owner->dev->format, w->opcode)->flags & ROCEMU_WQE_OP_TSO;
	uint64_t len = (uint64_t)w->eth.hdr_len + w->length;
	enum ibv_wc_status status;

	if (tso && (!w->eth.mss || w->eth.hdr_len < ROCEMU_ETH_HLEN ||
		    w->eth.hdr_len > qp->raw->max_tso_header))
		return IBV_WC_LOC_QP_OP_ERR;
	if (tso)
		return w->length > ROCEMU_RAW_MAX_TSO ? IBV_WC_LOC_LEN_ERR : rocemu_raw_tso_out(qp, w);
	if (len > rocemu_raw_frame_max(qp->owner->dev) || len > sizeof(stage) - ETH_ZLEN)
		return IBV_WC_LOC_LEN_ERR;
	status = frame_gather(qp, w);
	if (status)
		return status;
	rocemu_raw_frame_out(qp, stage, (uint32_t)len, w->eth.l3_csum, w->eth.l4_csum);
	return IBV_WC_SUCCESS;
}

void rocemu_raw_send_run(struct rocemu_qp *qp)
{
	struct rocemu_raw *raw = qp->raw;
	struct rocemu_send_wqe w;
	enum ibv_wc_status status;
	int posted;

	if (qp->attr.qp_state != IBV_QPS_RTS)
		return;
	/* Read once: a run takes at most one ring of WQEs. */
	posted = qp->owner->dev->format->sq_posted(qp, raw->sq_bb);
	if (posted < 0) {
		rocemu_sq_broken_log(qp, 0, raw->sq_bb);
		rocemu_dgram_qp_fatal(qp);
		return;
	}
	while (qp->attr.qp_state == IBV_QPS_RTS && posted > 0) {
		int err = qp->owner->dev->format->parse_send(qp, raw->sq_bb, (uint32_t)posted, &w);

		raw->sq_bb += w.bbs;
		posted -= (int)w.bbs;
		status = err ? IBV_WC_LOC_QP_OP_ERR : send_wqe(qp, &w);
		rocemu_dgram_complete_send(qp, &w, status);
	}
}
