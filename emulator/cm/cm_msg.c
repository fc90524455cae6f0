/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/cm/cm_msg.h"

#include <string.h>

#include "emulator/cm/cm_mad.h"
#include "net/roce/roce_hdr.h"

#define CM_TIME_MAX 31

/* The transport service type and extended transport type of t. */
static void transport_codes(enum cm_transport t, uint8_t *tst, uint8_t *ett)
{
	*ett = 0;
	switch (t) {
	case CM_TRANSPORT_RC:
		*tst = CM_TST_RC;
		break;
	case CM_TRANSPORT_UC:
		*tst = CM_TST_UC;
		break;
	default:		/* this CM sends no other */
		*tst = CM_TST_EXTENDED;
		*ett = CM_ETT_XRC;
		break;
	}
}

static enum cm_transport transport_of(uint8_t tst, uint8_t ett)
{
	switch (tst) {
	case CM_TST_RC:
		return CM_TRANSPORT_RC;
	case CM_TST_UC:
		return CM_TRANSPORT_UC;
	case CM_TST_EXTENDED:
		return ett == CM_ETT_XRC ? CM_TRANSPORT_XRC : CM_TRANSPORT_OTHER;
	default:
		return CM_TRANSPORT_OTHER;
	}
}

void cm_req_put(uint8_t *mad, const struct cm_req *req)
{
	bool xrc = req->transport == CM_TRANSPORT_XRC;
	uint8_t tst, ett;

	transport_codes(req->transport, &tst, &ett);
	rocemu_put_be32(&mad[MAD_OFF_ATTR_MOD], req->ece_options);
	rocemu_put_be32(&mad[CM_LOCAL_COMM_ID], req->local_comm_id);
	rocemu_put_be24(&mad[CM_REQ_VENDOR_ID], req->ece_vendor_id & 0xffffff);
	rocemu_put_be64(&mad[CM_REQ_SERVICE_ID], req->service_id);
	memcpy(&mad[CM_REQ_LOCAL_CA_GUID], req->local_ca_guid, sizeof(req->local_ca_guid));
	rocemu_put_be24(&mad[CM_REQ_LOCAL_QPN], req->local_qpn & ROCEMU_QPN_MASK);
	/* An XRC initiator has no responder, retries or SRQ to offer (the kernel's cm_format_req). */
	mad[CM_REQ_RESPONDER_RESOURCES] = xrc ? 0 : req->responder_resources;
	mad[CM_REQ_INITIATOR_DEPTH] = req->initiator_depth;
	mad[CM_REQ_TIMEOUT_TYPE_FC] = (uint8_t)((req->remote_cm_response_timeout & 0x1f) << 3 |
						tst << 1 | (req->flow_control ? 1 : 0));
	rocemu_put_be24(&mad[CM_REQ_STARTING_PSN], req->starting_psn & ROCEMU_PSN_MASK);
	mad[CM_REQ_TIMEOUT_RETRY] = (uint8_t)((req->local_cm_response_timeout & 0x1f) << 3 |
					      (xrc ? 0 : req->retry_count & 7));
	rocemu_put_be16(&mad[CM_REQ_PKEY], req->pkey);
	mad[CM_REQ_MTU_RNR] = (uint8_t)((req->mtu & 0xf) << 4 | (xrc ? 0 : req->rnr_retry_count & 7));
	mad[CM_REQ_RETRIES_SRQ] = (uint8_t)((req->max_cm_retries & 0xf) << 4 |
					    (!xrc && req->srq ? 1 << 3 : 0) | ett);
	rocemu_put_be16(&mad[CM_REQ_PRIMARY_SLID], req->local_lid);
	rocemu_put_be16(&mad[CM_REQ_PRIMARY_DLID], req->remote_lid);
	memcpy(&mad[CM_REQ_PRIMARY_SGID], req->local_gid, sizeof(req->local_gid));
	memcpy(&mad[CM_REQ_PRIMARY_DGID], req->remote_gid, sizeof(req->remote_gid));
	mad[CM_REQ_PRIMARY_TCLASS] = req->traffic_class;
	mad[CM_REQ_PRIMARY_HOP_LIMIT] = req->hop_limit;
	mad[CM_REQ_PRIMARY_ACK_TIMEOUT] = (uint8_t)((req->local_ack_timeout & 0x1f) << 3);
}

void cm_req_get(const uint8_t *mad, struct cm_req *req)
{
	uint8_t b43 = mad[CM_REQ_TIMEOUT_TYPE_FC], b47 = mad[CM_REQ_TIMEOUT_RETRY];
	uint8_t b50 = mad[CM_REQ_MTU_RNR], b51 = mad[CM_REQ_RETRIES_SRQ];

	memset(req, 0, sizeof(*req));
	req->ece_options = rocemu_get_be32(&mad[MAD_OFF_ATTR_MOD]);
	req->local_comm_id = rocemu_get_be32(&mad[CM_LOCAL_COMM_ID]);
	req->ece_vendor_id = rocemu_get_be24(&mad[CM_REQ_VENDOR_ID]);
	req->service_id = rocemu_get_be64(&mad[CM_REQ_SERVICE_ID]);
	memcpy(req->local_ca_guid, &mad[CM_REQ_LOCAL_CA_GUID], sizeof(req->local_ca_guid));
	req->local_qpn = rocemu_get_be24(&mad[CM_REQ_LOCAL_QPN]);
	req->responder_resources = mad[CM_REQ_RESPONDER_RESOURCES];
	req->initiator_depth = mad[CM_REQ_INITIATOR_DEPTH];
	req->remote_cm_response_timeout = b43 >> 3;
	req->transport = transport_of(b43 >> 1 & 3, b51 & 7);
	req->flow_control = b43 & 1;
	req->starting_psn = rocemu_get_be24(&mad[CM_REQ_STARTING_PSN]);
	req->local_cm_response_timeout = b47 >> 3;
	req->retry_count = b47 & 7;
	req->pkey = rocemu_get_be16(&mad[CM_REQ_PKEY]);
	req->mtu = b50 >> 4;
	req->rnr_retry_count = b50 & 7;
	req->max_cm_retries = b51 >> 4;
	req->srq = b51 >> 3 & 1;
	req->local_lid = rocemu_get_be16(&mad[CM_REQ_PRIMARY_SLID]);
	req->remote_lid = rocemu_get_be16(&mad[CM_REQ_PRIMARY_DLID]);
	memcpy(req->local_gid, &mad[CM_REQ_PRIMARY_SGID], sizeof(req->local_gid));
	memcpy(req->remote_gid, &mad[CM_REQ_PRIMARY_DGID], sizeof(req->remote_gid));
	req->traffic_class = mad[CM_REQ_PRIMARY_TCLASS];
	req->hop_limit = mad[CM_REQ_PRIMARY_HOP_LIMIT];
	req->local_ack_timeout = mad[CM_REQ_PRIMARY_ACK_TIMEOUT] >> 3;
}

void cm_rep_put(uint8_t *mad, const struct cm_rep *rep, bool xrc)
{
	rocemu_put_be32(&mad[MAD_OFF_ATTR_MOD], rep->ece_options);
	rocemu_put_be32(&mad[CM_LOCAL_COMM_ID], rep->local_comm_id);
	rocemu_put_be32(&mad[CM_REMOTE_COMM_ID], rep->remote_comm_id);
	/* An XRC target names itself in Local EECN and always has its SRQ (the kernel's cm_format_rep). */
	rocemu_put_be24(&mad[xrc ? CM_REP_LOCAL_EECN : CM_REP_LOCAL_QPN], rep->qpn & ROCEMU_QPN_MASK);
	rocemu_put_be24(&mad[CM_REP_STARTING_PSN], rep->starting_psn & ROCEMU_PSN_MASK);
	/* The ECE vendor, a byte after each of the three 24-bit fields. */
	mad[CM_REP_VENDOR_ID_H] = (uint8_t)(rep->ece_vendor_id >> 16);
	mad[CM_REP_VENDOR_ID_M] = (uint8_t)(rep->ece_vendor_id >> 8);
	mad[CM_REP_VENDOR_ID_L] = (uint8_t)rep->ece_vendor_id;
	mad[CM_REP_RESPONDER_RESOURCES] = rep->responder_resources;
	mad[CM_REP_INITIATOR_DEPTH] = xrc ? 0 : rep->initiator_depth;
	mad[CM_REP_ACK_DELAY_FO_FC] = (uint8_t)((rep->target_ack_delay & 0x1f) << 3 |
						(rep->failover & 3) << 1 |
						(!xrc && rep->flow_control ? 1 : 0));
	mad[CM_REP_RNR_SRQ] = (uint8_t)((rep->rnr_retry_count & 7) << 5 |
					(xrc || rep->srq ? 1 << 4 : 0));
	memcpy(&mad[CM_REP_LOCAL_CA_GUID], rep->local_ca_guid, sizeof(rep->local_ca_guid));
}

void cm_rep_get(const uint8_t *mad, struct cm_rep *rep, bool xrc)
{
	uint8_t b26 = mad[CM_REP_ACK_DELAY_FO_FC], b27 = mad[CM_REP_RNR_SRQ];

	memset(rep, 0, sizeof(*rep));
	rep->ece_options = rocemu_get_be32(&mad[MAD_OFF_ATTR_MOD]);
	rep->local_comm_id = rocemu_get_be32(&mad[CM_LOCAL_COMM_ID]);
	rep->remote_comm_id = rocemu_get_be32(&mad[CM_REMOTE_COMM_ID]);
	rep->qpn = rocemu_get_be24(&mad[xrc ? CM_REP_LOCAL_EECN : CM_REP_LOCAL_QPN]);
	rep->starting_psn = rocemu_get_be24(&mad[CM_REP_STARTING_PSN]);
	rep->ece_vendor_id = (uint32_t)mad[CM_REP_VENDOR_ID_H] << 16 |
			     (uint32_t)mad[CM_REP_VENDOR_ID_M] << 8 | mad[CM_REP_VENDOR_ID_L];
	rep->responder_resources = mad[CM_REP_RESPONDER_RESOURCES];
	rep->initiator_depth = mad[CM_REP_INITIATOR_DEPTH];
	rep->target_ack_delay = b26 >> 3;
	rep->failover = b26 >> 1 & 3;
	rep->flow_control = b26 & 1;
	rep->rnr_retry_count = b27 >> 5;
	rep->srq = b27 >> 4 & 1;
	memcpy(rep->local_ca_guid, &mad[CM_REP_LOCAL_CA_GUID], sizeof(rep->local_ca_guid));
}

uint8_t cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time)
{
	/* 2^t1 + 2^t2 is at most 2^(max + 1): round up only when the smaller term is close. */
	unsigned int life = packet_life_time + 1u, t;

	if (life >= ca_ack_delay)
		t = life + (ca_ack_delay + 1u >= life);
	else
		t = ca_ack_delay + (life + 1u >= ca_ack_delay);
	return (uint8_t)(t < CM_TIME_MAX ? t : CM_TIME_MAX);
}

unsigned int cm_time_to_ms(uint8_t t)
{
	return 1u << (t > 8 ? t - 8 : 0);
}
