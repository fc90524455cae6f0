/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The transports, each a struct rocemu_transport_ops (the table obj/qp.h
 * declares), and the lookups that find them (transport.c). The doorbell
 * scan, the receive path and the QP lifecycle call a QP's transport
 * through its ops and never name one; a transport is one set of files and
 * one row in each lookup below. RC, UC, UD, XRC and DC today: other QP
 * types fail at create with EOPNOTSUPP, and packets of other transports
 * are dropped and counted.
 */
#ifndef ROCEMU_EMULATOR_TRANSPORT_H
#define ROCEMU_EMULATOR_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "emulator/obj/qp.h"
#include "net/roce/ipv4.h"
#include "net/roce/roce_opcode.h"

struct rocemu_device;

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

extern const struct rocemu_transport_ops rocemu_rc_transport;
extern const struct rocemu_transport_ops rocemu_uc_transport;
extern const struct rocemu_transport_ops rocemu_ud_transport;
extern const struct rocemu_transport_ops rocemu_xrc_transport;
extern const struct rocemu_transport_ops rocemu_dc_transport;
extern const struct rocemu_transport_ops rocemu_raw_transport;

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
