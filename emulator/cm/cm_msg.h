/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The REQ and REP a connection starts with (IBTA 12.6.5 and 12.6.8, tables
 * 106 and 110; XRC as annex A14 and the kernel's cm_msgs.h have it): each
 * field to and from the MAD's bytes, and what it means to the side that
 * reads it, as the kernel's ib_cm reads it. The private data stays in the
 * MAD (CM_REQ_PRIVATE_DATA, CM_REP_PRIVATE_DATA); the handshake's states
 * are cm_proto.c's.
 */
#ifndef ROCEMU_EMULATOR_CM_MSG_H
#define ROCEMU_EMULATOR_CM_MSG_H

#include <stdbool.h>
#include <stdint.h>

/* The transport a REQ asks for: its transport service type, for XRC with the extended type. */
enum cm_transport {
	CM_TRANSPORT_RC,
	CM_TRANSPORT_UC,
	CM_TRANSPORT_XRC,	/* an XRC initiator to an XRC target */
	CM_TRANSPORT_OTHER,	/* RD, or an extended type this CM does not know */
};

/*
 * A REQ's fields, host order. The sender's own values throughout: the
 * receiver takes each crosswise (its initiator depth is the sender's
 * responder resources and the other way round, the kernel's
 * cm_req_handler), and starting_psn is where the SENDER's receive queue
 * starts, so the receiver's first request carries it: ib_send_cm_req sets
 * the sender's rq_psn from it, cm_req_handler the receiver's sq_psn.
 */
struct cm_req {
	uint32_t local_comm_id;
	uint32_t ece_vendor_id;		/* 24 bits */
	uint32_t ece_options;		/* carried in the MAD's attribute modifier */
	uint64_t service_id;
	uint8_t local_ca_guid[8];	/* as the wire has it */
	uint32_t local_qpn;		/* an XRC initiator's QPN for XRC */
	uint8_t responder_resources;	/* READs and atomics the sender answers at once; 0 for XRC */
	uint8_t initiator_depth;	/* READs and atomics the sender has outstanding at once */
	uint8_t remote_cm_response_timeout, local_cm_response_timeout;	/* 4.096 us * 2^n */
	enum cm_transport transport;
	bool flow_control;
	uint32_t starting_psn;
	uint8_t retry_count;		/* the receiver's RTS retry_cnt; 0 for XRC */
	uint8_t rnr_retry_count;	/* the receiver's RTS rnr_retry; 0 for XRC */
	uint16_t pkey;
	uint8_t mtu;			/* enum ibv_mtu */
	uint8_t max_cm_retries;		/* how often the receiver resends its REP */
	bool srq;			/* 0 for XRC */
	uint16_t local_lid, remote_lid;
	uint8_t local_gid[16], remote_gid[16];
	uint8_t traffic_class, hop_limit;
	uint8_t local_ack_timeout;	/* the receiver's RTS timeout (4.096 us * 2^n) */
};

/*
 * A REP's fields, host order: the sender's again. starting_psn is where
 * the sender's (the passive side's) receive queue starts: ib_send_cm_rep
 * sets the sender's rq_psn from it, cm_rep_handler the receiver's sq_psn.
 */
struct cm_rep {
	uint32_t local_comm_id, remote_comm_id;
	uint32_t ece_vendor_id, ece_options;
	uint32_t qpn;			/* Local QPN; an XRC target's travels in Local EECN */
	uint32_t starting_psn;
	uint8_t responder_resources;	/* the receiver's initiator depth (max_rd_atomic) */
	uint8_t initiator_depth;	/* the receiver's responder resources; 0 from an XRC target */
	uint8_t target_ack_delay;	/* the sender's local_ca_ack_delay, for the receiver's ACK timeout */
	uint8_t failover;
	bool flow_control;		/* 0 from an XRC target */
	uint8_t rnr_retry_count;	/* the receiver's RTS rnr_retry */
	bool srq;			/* always 1 from an XRC target */
	uint8_t local_ca_guid[8];
};

/* Fill a REQ's fields into mad (its MAD header already made); an XRC REQ leaves out what the initiator has not. */
void cm_req_put(uint8_t *mad, const struct cm_req *req);
/* The fields of the REQ in mad. */
void cm_req_get(const uint8_t *mad, struct cm_req *req);
/* Fill a REP's fields into mad; xrc: from an XRC target (QPN in Local EECN, SRQ set). */
void cm_rep_put(uint8_t *mad, const struct cm_rep *rep, bool xrc);
/* The fields of the REP in mad; xrc: read by an XRC initiator (the QPN from Local EECN). */
void cm_rep_get(const uint8_t *mad, struct cm_rep *rep, bool xrc);

/*
 * The local ACK timeout for a peer that takes ca_ack_delay to acknowledge
 * over a path of packet_life_time (both 4.096 us * 2^n): the kernel's
 * cm_ack_timeout, the larger of the two plus one when the smaller is
 * within half of it, at most 31.
 */
uint8_t cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time);

/* Milliseconds of a CM timeout of 4.096 us * 2^t, as the kernel's cm_convert_to_ms rounds it. */
unsigned int cm_time_to_ms(uint8_t t);

#endif /* ROCEMU_EMULATOR_CM_MSG_H */
