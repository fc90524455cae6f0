/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Transports behind one table. The doorbell scan, the receive path and
 * the QP lifecycle call a QP's transport through these ops and never name
 * one; a transport is one set of files and one row in each lookup below
 * (transport.c). RC, UC, UD, XRC and DC today: other QP types fail at create with
 * EOPNOTSUPP, and packets of other transports are dropped and counted.
 */
#ifndef ROCEMU_EMULATOR_TRANSPORT_H
#define ROCEMU_EMULATOR_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "emulator/obj/qp_timer.h"
#include "net/roce/ipv4.h"
#include "net/roce/roce_opcode.h"

struct rocemu_client;
struct rocemu_create_qp_req;
struct rocemu_device;
struct rocemu_qp;

/* A received packet as rx.c checked it (ICRC, headers, QP), for the transport. */
struct rocemu_pkt {
	struct rocemu_device *dev;
	const uint8_t *bth;
	const struct rocemu_opcode_info *info;
	uint8_t opcode;
	uint32_t psn;
	const uint8_t *payload;
	uint32_t paylen;
	uint32_t saddr;			/* the sender, network byte order (UD: the GRH) */
	uint32_t daddr;			/* the device's address or a multicast group it joined */
	uint32_t len;			/* the whole UDP payload, BTH to ICRC */
	struct rocemu_ipv4_fields ip;	/* of its IPv4 header (UD: the GRH) */
};

struct rocemu_transport_ops {
	const char *name;		/* "RC", for logs */
	/* One peer: packets from any other address are dropped (rxe's check_addr). */
	bool connected;
	/* Create, before anything is made: the request's own attributes hold (NULL: none). 0 or -errno. */
	int (*create_check)(const struct rocemu_create_qp_req *req);
	/* Create: the transport's state (qp->layout is set). 0 or -errno. */
	int (*init)(struct rocemu_qp *qp);
	/* Create, qp made (owner, PD, CQs, SRQ, an XRC target's xrcd_open): what req says of it (NULL: none). */
	void (*created)(struct rocemu_qp *qp, const struct rocemu_create_qp_req *req);
	/* Whether c reaches qp without owning it (ibv_open_qp). NULL: never. */
	bool (*opened_by)(const struct rocemu_qp *qp, const struct rocemu_client *c);
	/* c lets go of qp (destroy, its context closes): whether qp is freed now. NULL: it is. */
	bool (*release)(struct rocemu_client *c, struct rocemu_qp *qp);
	/* qp->srq goes while qp lives (an XRC target's; others hold theirs): forget it. */
	void (*srq_gone)(struct rocemu_qp *qp);
	/* Destroy: give back what init and the QP's life took. */
	void (*destroy)(struct rocemu_qp *qp);
	/* ibv_modify_qp committed cur -> next: set the engines up, or flush on ERR. */
	void (*modified)(struct rocemu_qp *qp, enum ibv_qp_state cur, enum ibv_qp_state next);
	/* The doorbell moved (or may have): fetch new WQEs and send what may go. */
	void (*post)(struct rocemu_qp *qp);
	/* In ERR: complete every WQE posted since the last flush with WR_FLUSH_ERR. */
	void (*flush)(struct rocemu_qp *qp);
	/* One packet of this transport for qp. */
	void (*rx)(struct rocemu_qp *qp, const struct rocemu_pkt *pkt);
	/* A timer of qp (qp_timer.c) expired. */
	void (*timer)(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind);
	/* SQD: WQEs posted before the transition are still to finish (ibv_query_qp). */
	bool (*sq_draining)(const struct rocemu_qp *qp);
	/*
	 * Work held back within one turn by every QP of this transport and of
	 * those on its engines (NULL: none): the receive buffer a datagram
	 * came in ends; the turn ends or a control request is to be served.
	 */
	void (*rx_buffer_end)(void);
	void (*settle)(void);
};

extern const struct rocemu_transport_ops rocemu_rc_transport;
extern const struct rocemu_transport_ops rocemu_uc_transport;
extern const struct rocemu_transport_ops rocemu_ud_transport;
extern const struct rocemu_transport_ops rocemu_xrc_transport;
extern const struct rocemu_transport_ops rocemu_dc_transport;

/*
 * Work transports hold back within one turn of the loop (RC's held data
 * placements and coalesced ACKs): the receive buffer a datagram came in
 * ends (what still points into it is copied aside or lands), or the turn
 * ends or a control request is to be served (all of it is done now).
 */
void rocemu_transport_rx_buffer_end(void);
void rocemu_transport_settle(void);

/* Log that qp's send doorbell is past its ring, seen at PSN psn from BB counter bb. */
void rocemu_sq_broken_log(const struct rocemu_qp *qp, uint32_t psn, uint32_t bb);

/* The transport of a QP type, or NULL when there is none (yet). */
const struct rocemu_transport_ops *rocemu_transport_of_qp_type(enum ibv_qp_type type);
/* The transport of a BTH opcode, by its class (bits 7:5), or NULL. */
const struct rocemu_transport_ops *rocemu_transport_of_opcode(uint8_t opcode);

#endif /* ROCEMU_EMULATOR_TRANSPORT_H */
