/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RAW_PACKET transport of one QP: each send WQE is one Ethernet frame
 * (the Ethernet segment's inline header, then the WQE's data), or with
 * TSO a run of frames of mss bytes of payload, handed to the port's switch
 * (raw_send.c); each frame the port's steering gives the QP goes whole
 * into the next receive WQE, of its SRQ or its RQ (raw_recv.c); raw_qp.c
 * has the ops, the create checks, the errors and the flush. Everything
 * runs on the daemon's one loop.
 */
#ifndef ROCEMU_EMULATOR_RAW_H
#define ROCEMU_EMULATOR_RAW_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "net/eth/toeplitz.h"
#include "rocemu/ctrl.h"

struct rocemu_device;
struct rocemu_eth_frame;
struct rocemu_qp;
struct rocemu_rwq_ind_table;
struct rocemu_send_wqe;

/* The largest max_tso_header (a ConnectX-5's, ibv_query_device_ex's tso_caps). */
#define ROCEMU_RAW_MAX_TSO_HEADER 256u
/* The largest TSO message: payload bytes of one WQE (ibv_tso_caps.max_tso). */
#define ROCEMU_RAW_MAX_TSO (256u * 1024u)

struct rocemu_raw {
	uint32_t sq_bb;			/* next BB to fetch from the SQ ring */
	uint32_t rq_ci;			/* next receive WQE counter of the RQ (none with an SRQ) */
	uint32_t max_tso_header;	/* 0: the QP was made without TSO */
	/* RSS: the indirection table (NULL: not an RSS QP) it holds, and the hash asked for */
	struct rocemu_rwq_ind_table *rss_table;
	struct rocemu_rss_conf rss;	/* its key: rss_key */
	uint8_t rss_key[ROCEMU_RSS_KEY_MAX];
};

/* ---- raw_send.c ---- */
/* Send every WQE posted (RTS): a frame each, or a run of them with TSO. */
void rocemu_raw_send_run(struct rocemu_qp *qp);
/*
 * One frame of len bytes of qp onto the port, padded to Ethernet's least
 * (frame has room for it), its IPv4 header and TCP/UDP checksums filled
 * as asked.
 */
void rocemu_raw_frame_out(struct rocemu_qp *qp, uint8_t *frame, uint32_t len, bool l3_csum,
			  bool l4_csum);
/* The largest frame without TSO: the port's MTU, an Ethernet header and one VLAN tag. */
uint32_t rocemu_raw_frame_max(const struct rocemu_device *dev);

/* ---- raw_tso.c ---- */
/*
 * The frames of TSO WQE w (net/eth/tso.h). IBV_WC_SUCCESS;
 * IBV_WC_LOC_QP_OP_ERR for a header that is not Ethernet, IP and TCP up
 * to the payload, IBV_WC_LOC_LEN_ERR for frames over the port's MTU, or
 * the gather's status.
 */
enum ibv_wc_status rocemu_raw_tso_out(struct rocemu_qp *qp, const struct rocemu_send_wqe *w);

/* ---- raw_recv.c ---- */
/* One frame the port steered to qp: receive WQE, the frame (its FCS, its tag stripped), CQE. */
void rocemu_raw_rx_frame(struct rocemu_qp *qp, const struct rocemu_eth_frame *f,
			 uint32_t flow_tag);

#endif /* ROCEMU_EMULATOR_RAW_H */
