/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A RAW_PACKET QP of the raw packet tests, through the standard verbs
 * API: its CQs, a send buffer and RAW_RX_DEPTH receive slots always
 * posted, in RTS; its port's MAC and IPv4 address (the default MAC, 02:00
 * then the address of GID 0); a flow steering the port's own MAC to it.
 */
#ifndef ROCEMU_TESTS_E2E_RAW_PORT_H
#define ROCEMU_TESTS_E2E_RAW_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/if_ether.h>
#include <infiniband/verbs.h>

#include "tests/e2e/harness/verbs_pair.h"

#define RAW_SLOT 4096		/* bytes of a receive slot: a frame up to the port MTU */
#define RAW_RX_DEPTH 128
#define RAW_TX_BYTES (128 * 1024)
#define RAW_WAIT_MS 5000	/* a frame later than this counts as missing */

struct raw_port {
	struct dev *dev;
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_cq_ex *recv_cq_ex;	/* recv_cq's own: byte_len and flow tag */
	struct ibv_qp *qp;
	struct buf *tx, *rx;
	uint8_t mac[ETH_ALEN];
	uint32_t addr;		/* IPv4, network order */
};

/* A RAW_PACKET QP on d (max_tso_header 0: none) in RTS with every receive posted. */
bool raw_port_open(struct raw_port *p, struct dev *d, uint16_t max_tso_header);
/* The QP and CQs destroyed; its buffers go with the test's bufs_free(). */
void raw_port_close(struct raw_port *p);
/* The RAW_PACKET QP of ibv_create_qp_ex on d: NULL with errno set. */
struct ibv_qp *raw_qp_create(struct dev *d, struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
			     uint16_t max_tso_header);
int raw_qp_to_rts(struct ibv_qp *qp);

/* A rule steering frames to p's MAC (ETH spec, dst_mac exact) into qp: NULL with errno set. */
struct ibv_flow *raw_flow_to_mac(struct ibv_qp *qp, const uint8_t *mac);

/* One frame sent from p's send buffer with send_flags: the send's completion status, -1 when none came. */
int raw_send(struct raw_port *p, const void *frame, size_t len, unsigned int send_flags);
/* wr (its sge over p->tx) posted signaled: the completion status, -1 when none came. */
int raw_post_wait(struct raw_port *p, struct ibv_send_wr *wr);
/*
 * The next frame p receives, copied into out (RAW_SLOT bytes), its slot
 * posted again; wc has its wr_id, status, byte_len and wc_flags, *flow_tag
 * (unless NULL) its flow tag: 1, 0 when none came in ms, -1 on error.
 */
int raw_recv(struct raw_port *p, struct ibv_wc *wc, uint32_t *flow_tag, uint8_t *out, unsigned int ms);

#endif /* ROCEMU_TESTS_E2E_RAW_PORT_H */
