/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The connection handshake of RC, UC and XRC ids on the wire (IBTA 12.9,
 * the kernel's cm.c with cma.c's events), and SIDR for UD ids: the active
 * side sends a REQ with the RDMA CM IP service ID and the CMA header, the
 * passive side answers REP or REJ, the active side RTU; DREQ and DREP end
 * it, then timewait. A MAD that waits for an answer (REQ, REP, DREQ) is
 * resent each timeout until the retries run out, which ends in
 * UNREACHABLE (or DISCONNECTED) with -ETIMEDOUT, never a hang. Every MAD
 * received is checked against the id and the state it names before it
 * changes anything; others are dropped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>

#include "emulator/cm/cm.h"
#include "emulator/cm/cm_msg.h"
#include "emulator/core/emu.h"
#include "emulator/engine/transport.h"
#include "net/roce/roce_opcode.h"
#include "rocemu/log.h"

/*
 * The kernel's cma on RoCE: REQ and REP wait 2^20 * 4.096 us for an
 * answer (plus twice the packet life, for the REQ), resent 15 times; a
 * ConnectX acknowledges within 2^16 * 4.096 us (its local_ca_ack_delay).
 */
#define CMA_CM_RESPONSE_TIMEOUT 20
#define CMA_MAX_CM_RETRIES 15
#define CM_TARGET_ACK_DELAY 16	/* the device's local_ca_ack_delay (device.c) */
#define CM_LID_PERMISSIVE 0xffff
#define CM_RETRY_MAX 7

static unsigned int cm_timeout_ms;	/* ROCEMU_CM_TIMEOUT_MS: every resend after as long; 0: as the kernel's */
static unsigned int cm_max_retries = CMA_MAX_CM_RETRIES;
static bool cm_refuse_unlistened = true;	/* ROCEMU_CM_UNLISTENED=drop: stay silent instead */

/* A positive number from the environment, or def. */
static unsigned int env_uint(const char *name, unsigned int def, unsigned int max)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	v = strtoul(s, &end, 10);
	if (*end || v > max) {
		rocemu_log(ROCEMU_LOG_WARN, "%s=%s: not a number up to %u, using %u", name, s, max,
			   def);
		return def;
	}
	return (unsigned int)v;
}

static void cm_rx(struct rocemu_device *dev, const struct rocemu_pkt *pkt);

void cm_proto_start(struct rocemu_emu *emu)
{
	emu->qp1_rx = cm_rx;
	cm_timeout_ms = env_uint("ROCEMU_CM_TIMEOUT_MS", 0, 3600000);
	cm_max_retries = env_uint("ROCEMU_CM_RETRIES", CMA_MAX_CM_RETRIES, CMA_MAX_CM_RETRIES);
	cm_refuse_unlistened = !getenv("ROCEMU_CM_UNLISTENED") ||
			       strcmp(getenv("ROCEMU_CM_UNLISTENED"), "drop");
}

/* A request nobody listens for: refused (the kernel's way), or dropped so that its sender resends. */
static bool refuse_unlistened(struct rocemu_device *dev, uint32_t saddr)
{
	if (!cm_refuse_unlistened)
		rocemu_log(ROCEMU_LOG_DEBUG, "%s: CM request from %08x for no listener dropped",
			   dev->name, ntohl(saddr));
	return cm_refuse_unlistened;
}

static void cm_set_state(struct rocemu_cm_id *id, enum cm_state s)
{
	rocemu_log(ROCEMU_LOG_DEBUG, "%s rdma_cm id %u qp 0x%06x cm %s -> %s",
		   id->dev ? id->dev->name : "-", id->handle, id->local_qpn,
		   cm_state_name(id->cm), cm_state_name(s));
	id->cm = s;
}

static void cm_timer(void *arg);

static void timer_arm(struct rocemu_cm_id *id, unsigned int ms)
{
	if (id->timer)
		rocemu_loop_timer_cancel(id->emu->loop, id->timer);
	id->timer = rocemu_loop_timer_add(id->emu->loop, rocemu_now_ns() + ms * 1000000ull,
					  cm_timer, id);
}

static void timer_stop(struct rocemu_cm_id *id)
{
	if (id->timer)
		rocemu_loop_timer_cancel(id->emu->loop, id->timer);
	id->timer = 0;
}

static void mad_send(struct rocemu_device *dev, uint32_t daddr, const uint8_t *mad)
{
	char to[INET_ADDRSTRLEN];
	int err = cm_mad_send(dev, daddr, mad);

	if (rocemu_log_enabled(ROCEMU_LOG_DEBUG) || err)
		rocemu_log(err ? ROCEMU_LOG_WARN : ROCEMU_LOG_DEBUG,
			   "%s cm tx %s comm 0x%08x to %s%s%s", dev->name,
			   cm_attr_name(cm_mad_attr(mad)), rocemu_get_be32(&mad[CM_LOCAL_COMM_ID]),
			   inet_ntop(AF_INET, &daddr, to, sizeof(to)), err ? ": " : "",
			   err ? strerror(-err) : "");
}

/*
 * How id resends what waits for an answer: after ms, retries times, as
 * the kernel's cm_id_priv timeout_ms and max_cm_retries; the environment
 * shortens both.
 */
static void resend_policy(struct rocemu_cm_id *id, unsigned int ms, unsigned int retries)
{
	id->resend_ms = cm_timeout_ms ? cm_timeout_ms : ms;
	id->max_cm_retries = (uint8_t)(retries < cm_max_retries ? retries : cm_max_retries);
}

/* Send id's MAD and wait for its answer, resending it on each timeout. */
static void send_expecting_answer(struct rocemu_cm_id *id)
{
	id->retries_left = id->max_cm_retries;
	mad_send(id->dev, id->dst.sin_addr.s_addr, id->mad);
	timer_arm(id, id->resend_ms);
}

/*
 * A MAD of id: a request carries id's own transaction ID, an answer (REP,
 * REJ, DREP) the one of the peer's request it answers, as the kernel's CM.
 */
static uint8_t *mad_start(const struct rocemu_cm_id *id, enum cm_attr attr, uint8_t *mad)
{
	bool answer = attr == CM_ATTR_DREP || (id->passive && (attr == CM_ATTR_REP ||
							       attr == CM_ATTR_REJ));

	cm_mad_init(mad, attr, answer ? id->remote_tid : id->local_comm_id);
	rocemu_put_be32(&mad[CM_LOCAL_COMM_ID], id->local_comm_id);
	rocemu_put_be32(&mad[CM_REMOTE_COMM_ID], id->remote_comm_id);
	return mad;
}

static void gid_put(uint8_t *p, uint32_t addr)
{
	memset(p, 0, 16);
	p[10] = 0xff;
	p[11] = 0xff;
	memcpy(&p[12], &addr, sizeof(addr));
}

static uint8_t min_u8(uint8_t a, uint8_t b)
{
	return a < b ? a : b;
}

/* The CMA header at cma, for a request from id. */
static void cma_hdr_put(uint8_t *cma, const struct rocemu_cm_id *id)
{
	cma[CMA_HDR_OFF_VERSION] = CMA_HDR_VERSION;
	cma[CMA_HDR_OFF_IP_VERSION] = CMA_HDR_IPV4;
	memcpy(&cma[CMA_HDR_OFF_PORT], &id->src.sin_port, sizeof(id->src.sin_port));
	memcpy(&cma[CMA_HDR_OFF_SRC_V4], &id->src.sin_addr.s_addr, 4);
	memcpy(&cma[CMA_HDR_OFF_DST_V4], &id->dst.sin_addr.s_addr, 4);
}

/*
 * The listening id a request (its service ID sid and CMA header cma) at
 * dev goes to, found in the kernel's two steps: *held tells whether ib_cm
 * has a listener for the service ID on dev (an id listens on its port
 * space and port there); then the rdma_cm's id whose address the CMA
 * header names, NULL when the header is not one of IPv4 for dev. The QP
 * type is the caller's to check (cma_ib_check_req_qp_type).
 */
static struct rocemu_cm_id *listener_of(struct rocemu_device *dev, uint64_t sid, const uint8_t *cma,
					bool *held)
{
	uint16_t ps = cma_service_ps(sid);
	uint32_t daddr;

	*held = ps && cm_port_listened(dev->emu, dev, ps, (uint16_t)sid);
	memcpy(&daddr, &cma[CMA_HDR_OFF_DST_V4], sizeof(daddr));
	if (!*held || cma[CMA_HDR_OFF_VERSION] != CMA_HDR_VERSION ||
	    cma[CMA_HDR_OFF_IP_VERSION] != CMA_HDR_IPV4 || daddr != dev->ipv4)
		return NULL;
	return cm_find_listener(dev->emu, dev, ps, (uint16_t)sid, daddr);
}

/* rdma_connect of a UD id: a SIDR REQ, answered by the peer's QPN and Q_Key. */
static int sidr_connect(struct rocemu_cm_id *id, const struct ucma_abi_conn_param *param)
{
	uint8_t *mad = id->mad, *cma = &mad[CM_SIDR_REQ_PRIVATE_DATA];

	if (param->private_data_len > CM_SIDR_REQ_PRIVATE_BYTES - CMA_HDR_BYTES)
		return -EINVAL;
	cm_mad_init(mad, CM_ATTR_SIDR_REQ, id->local_comm_id);
	rocemu_put_be32(&mad[CM_SIDR_REQUEST_ID], id->local_comm_id);
	rocemu_put_be16(&mad[CM_SIDR_REQ_PKEY], CM_PKEY_DEFAULT);
	rocemu_put_be64(&mad[CM_SIDR_REQ_SERVICE_ID],
			cma_service_id(id->ps, ntohs(id->dst.sin_port)));
	cma_hdr_put(cma, id);
	memcpy(&cma[CMA_HDR_BYTES], param->private_data, param->private_data_len);
	/* cma_resolve_ib_udp: the response timeout alone, no packet life. */
	resend_policy(id, cm_time_to_ms(CMA_CM_RESPONSE_TIMEOUT), CMA_MAX_CM_RETRIES);
	id->state = CMA_CONNECT;
	cm_set_state(id, CM_REQ_SENT);
	send_expecting_answer(id);
	return 0;
}

/*
 * A SIDR REP to the request id took, kept in id->mad to answer its
 * repeats; SIDR is over then. Accepted, it carries the Q_Key of the UDP
 * port space and the ECE of the accept (the kernel's cma_send_sidr_rep and
 * cm_format_sidr_rep: the vendor's low two bytes and the options).
 */
static void sidr_rep_send(struct rocemu_cm_id *id, uint8_t status, uint32_t qpn,
			  const uint8_t *data, uint8_t len, const struct ucma_abi_ece *ece)
{
	uint8_t *mad = id->mad;

	cm_mad_init(mad, CM_ATTR_SIDR_REP, id->remote_tid);
	rocemu_put_be32(&mad[CM_SIDR_REQUEST_ID], id->remote_comm_id);
	mad[CM_SIDR_REP_STATUS] = status;
	rocemu_put_be24(&mad[CM_SIDR_REP_QPN], qpn & ROCEMU_QPN_MASK);
	rocemu_put_be64(&mad[CM_SIDR_REP_SERVICE_ID],
			cma_service_id(id->ps, ntohs(id->src.sin_port)));
	if (status == CM_SIDR_SUCCESS) {
		id->qkey = RDMA_UDP_QKEY;
		rocemu_put_be32(&mad[CM_SIDR_REP_QKEY], id->qkey);
		rocemu_put_be32(&mad[MAD_OFF_ATTR_MOD], ece->attr_mod);
		rocemu_put_be16(&mad[CM_SIDR_REP_VENDOR_ID_H], (ece->vendor_id >> 8) & 0xff);
		mad[CM_SIDR_REP_VENDOR_ID_L] = (uint8_t)ece->vendor_id;
	}
	if (len)	/* no private data may come as NULL, which memcpy may not take */
		memcpy(&mad[CM_SIDR_REP_PRIVATE_DATA], data, len);
	mad_send(id->dev, id->dst.sin_addr.s_addr, mad);
	id->listener = NULL;
	cm_set_state(id, CM_IDLE);
}

int cm_connect(struct rocemu_cm_id *id, const struct ucma_abi_conn_param *param,
	       const struct ucma_abi_ece *ece)
{
	uint8_t *mad = id->mad, *cma = &mad[CM_REQ_PRIVATE_DATA];
	struct cm_req req;

	if (id->qp_type == IBV_QPT_UD)
		return sidr_connect(id, param);
	/* RC, UC and XRC initiators connect (cm_validate_req_param). */
	if ((id->qp_type != IBV_QPT_RC && id->qp_type != IBV_QPT_UC &&
	     id->qp_type != IBV_QPT_XRC_SEND) ||
	    param->private_data_len > CM_REQ_PRIVATE_BYTES - CMA_HDR_BYTES)
		return -EINVAL;
	id->local_qpn = param->qp_num & ROCEMU_QPN_MASK;
	id->responder_resources = param->responder_resources;
	id->initiator_depth = param->initiator_depth;
	id->retry_count = min_u8(param->retry_count, CM_RETRY_MAX);
	id->rnr_retry_count = min_u8(param->rnr_retry_count, CM_RETRY_MAX);
	id->srq = param->srq;
	id->flow_control = param->flow_control;
	id->mtu = (uint8_t)id->dev->active_mtu;
	/* The path's until the REP names the peer's ACK delay (cm_init_av_by_path). */
	id->timeout = CMA_IBOE_PACKET_LIFETIME + 1;
	/* ib_send_cm_req: twice the packet life and the peer's response time. */
	resend_policy(id, 2 * cm_time_to_ms(CMA_IBOE_PACKET_LIFETIME) +
			  cm_time_to_ms(CMA_CM_RESPONSE_TIMEOUT), CMA_MAX_CM_RETRIES);

	req = (struct cm_req){
		.local_comm_id = id->local_comm_id,
		.ece_vendor_id = ece->vendor_id,
		.ece_options = ece->attr_mod,
		.service_id = cma_service_id(id->ps, ntohs(id->dst.sin_port)),
		.local_qpn = id->local_qpn,
		.responder_resources = id->responder_resources,
		.initiator_depth = id->initiator_depth,
		.remote_cm_response_timeout = CMA_CM_RESPONSE_TIMEOUT,
		.local_cm_response_timeout = CMA_CM_RESPONSE_TIMEOUT,
		.transport = id->qp_type == IBV_QPT_UC ? CM_TRANSPORT_UC :
			     id->qp_type == IBV_QPT_XRC_SEND ? CM_TRANSPORT_XRC : CM_TRANSPORT_RC,
		.flow_control = id->flow_control,
		/* Where this side's receive queue starts: ib_send_cm_req's rq_psn. */
		.starting_psn = id->rq_psn,
		.retry_count = id->retry_count,
		.rnr_retry_count = id->rnr_retry_count,
		.pkey = CM_PKEY_DEFAULT,
		.mtu = id->mtu,
		.max_cm_retries = CMA_MAX_CM_RETRIES,
		.srq = id->srq,
		/* Routed RoCE paths carry the permissive LID (the kernel's cm_format_req). */
		.local_lid = CM_LID_PERMISSIVE,
		.remote_lid = CM_LID_PERMISSIVE,
		.traffic_class = id->tos,
		.hop_limit = 64,
		/* What the peer's QP waits for our ACKs: our ACK delay and the path (cm_format_req). */
		.local_ack_timeout = cm_ack_timeout(CM_TARGET_ACK_DELAY, CMA_IBOE_PACKET_LIFETIME),
	};
	memcpy(req.local_ca_guid, &id->dev->node_guid, sizeof(req.local_ca_guid));
	gid_put(req.local_gid, id->src.sin_addr.s_addr);
	gid_put(req.remote_gid, id->dst.sin_addr.s_addr);
	cm_mad_init(mad, CM_ATTR_REQ, id->local_comm_id);
	cm_req_put(mad, &req);
	cma_hdr_put(cma, id);
	memcpy(&cma[CMA_HDR_BYTES], param->private_data, param->private_data_len);

	id->state = CMA_CONNECT;
	cm_set_state(id, CM_REQ_SENT);
	send_expecting_answer(id);
	return 0;
}

int cm_accept(struct rocemu_cm_id *id, const struct ucma_abi_conn_param *param,
	      const struct ucma_abi_ece *ece)
{
	uint8_t rtu[CM_MAD_BYTES], *mad = id->mad;
	struct cm_rep rep;

	if (id->qp_type == IBV_QPT_UD) {
		if (!param || id->cm != CM_REQ_RCVD ||
		    param->private_data_len > CM_SIDR_REP_PRIVATE_BYTES)
			return -EINVAL;
		sidr_rep_send(id, CM_SIDR_SUCCESS, param->qp_num, param->private_data,
			      param->private_data_len, ece);
		return 0;
	}
	if (!param) {		/* the active side, after the REP: RTU */
		if (id->cm != CM_REP_RCVD)
			return -EINVAL;
		mad_send(id->dev, id->dst.sin_addr.s_addr, mad_start(id, CM_ATTR_RTU, rtu));
		cm_set_state(id, CM_ESTABLISHED);
		return 0;
	}
	if (id->cm != CM_REQ_RCVD)
		return -EINVAL;
	if (param->private_data_len > CM_REP_PRIVATE_BYTES)
		return -EINVAL;
	id->local_qpn = param->qp_num & ROCEMU_QPN_MASK;
	id->responder_resources = param->responder_resources;
	id->initiator_depth = param->initiator_depth;
	rep = (struct cm_rep){
		.local_comm_id = id->local_comm_id,
		.remote_comm_id = id->remote_comm_id,
		.ece_vendor_id = ece->vendor_id,
		.ece_options = ece->attr_mod,
		.qpn = id->local_qpn,
		/* Where this side's receive queue starts: ib_send_cm_rep's rq_psn. */
		.starting_psn = id->rq_psn,
		.responder_resources = id->responder_resources,
		.initiator_depth = id->initiator_depth,
		.target_ack_delay = CM_TARGET_ACK_DELAY,
		.flow_control = param->flow_control,
		.rnr_retry_count = min_u8(param->rnr_retry_count, CM_RETRY_MAX),
		.srq = param->srq,
	};
	memcpy(rep.local_ca_guid, &id->dev->node_guid, sizeof(rep.local_ca_guid));
	cm_rep_put(mad_start(id, CM_ATTR_REP, mad), &rep, id->qp_type == IBV_QPT_XRC_RECV);
	memcpy(&mad[CM_REP_PRIVATE_DATA], param->private_data, param->private_data_len);
	id->listener = NULL;
	cm_set_state(id, CM_REP_SENT);
	send_expecting_answer(id);
	return 0;
}

/* A REJ answering the REQ mad from saddr that found no id (no listener, no room). */
static void reject_req(struct rocemu_device *dev, uint32_t saddr, const uint8_t *req, uint16_t reason)
{
	uint8_t rej[CM_MAD_BYTES];

	cm_mad_init(rej, CM_ATTR_REJ, rocemu_get_be64(&req[MAD_OFF_TID]));
	rocemu_put_be32(&rej[CM_REMOTE_COMM_ID], rocemu_get_be32(&req[CM_LOCAL_COMM_ID]));
	rej[CM_REJ_MSG_REJECTED] = CM_REJ_MSG_REQ << 6;
	rocemu_put_be16(&rej[CM_REJ_REASON], reason);
	mad_send(dev, saddr, rej);
}

static void send_rej(struct rocemu_cm_id *id, uint16_t reason, const uint8_t *data, uint8_t len)
{
	uint8_t rej[CM_MAD_BYTES];
	uint8_t msg = id->cm == CM_REP_RCVD ? CM_REJ_MSG_REP : CM_REJ_MSG_REQ;

	mad_start(id, CM_ATTR_REJ, rej);
	rej[CM_REJ_MSG_REJECTED] = (uint8_t)(msg << 6);
	rocemu_put_be16(&rej[CM_REJ_REASON], reason);
	if (len)	/* no private data may come as NULL, which memcpy may not take */
		memcpy(&rej[CM_REJ_PRIVATE_DATA], data, len);
	mad_send(id->dev, id->dst.sin_addr.s_addr, rej);
}

int cm_reject(struct rocemu_cm_id *id, uint8_t reason, const uint8_t *data, uint8_t len)
{
	if (id->qp_type == IBV_QPT_UD) {
		if (id->cm != CM_REQ_RCVD || len > CM_SIDR_REP_PRIVATE_BYTES)
			return -EINVAL;
		sidr_rep_send(id, CM_SIDR_REJECT, 0, data, len, NULL);
		return 0;
	}
	if (id->cm != CM_REQ_RCVD && id->cm != CM_REP_RCVD)
		return -EINVAL;
	send_rej(id, reason, data, len);
	timer_stop(id);
	id->listener = NULL;
	cm_set_state(id, CM_IDLE);
	return 0;
}

static void send_drep(struct rocemu_cm_id *id)
{
	uint8_t drep[CM_MAD_BYTES];

	mad_send(id->dev, id->dst.sin_addr.s_addr, mad_start(id, CM_ATTR_DREP, drep));
}

static void enter_timewait(struct rocemu_cm_id *id)
{
	cm_set_state(id, CM_TIMEWAIT);
	timer_arm(id, cm_time_to_ms(id->timeout));	/* cm_enter_timewait */
}

int cm_disconnect(struct rocemu_cm_id *id)
{
	switch (id->cm) {
	case CM_ESTABLISHED:
		mad_start(id, CM_ATTR_DREQ, id->mad);
		rocemu_put_be24(&id->mad[CM_DREQ_REMOTE_QPN], id->remote_qpn);
		cm_set_state(id, CM_DREQ_SENT);
		send_expecting_answer(id);
		return 0;
	case CM_DREQ_RCVD:
		send_drep(id);
		enter_timewait(id);
		return 0;
	default:
		return -EINVAL;
	}
}

int cm_establish(struct rocemu_cm_id *id)
{
	if (id->cm == CM_ESTABLISHED)
		return 0;
	if (id->cm != CM_REP_SENT)
		return -EINVAL;
	timer_stop(id);
	cm_set_state(id, CM_ESTABLISHED);
	cm_event_queue(id, id, RDMA_CM_EVENT_ESTABLISHED, 0);
	return 0;
}

void cm_abandon(struct rocemu_cm_id *id)
{
	timer_stop(id);
	if (id->qp_type == IBV_QPT_UD) {	/* SIDR has no REJ: a request not answered is refused */
		if (id->cm == CM_REQ_RCVD)
			sidr_rep_send(id, CM_SIDR_REJECT, 0, NULL, 0, NULL);
		id->cm = CM_IDLE;
		return;
	}
	switch (id->cm) {
	case CM_REQ_SENT:
		send_rej(id, CM_REJ_TIMEOUT, NULL, 0);
		break;
	case CM_REQ_RCVD:
	case CM_REP_SENT:
	case CM_REP_RCVD:
		send_rej(id, CM_REJ_CONSUMER_DEFINED, NULL, 0);
		break;
	case CM_ESTABLISHED:
		/* An XRC target QP lives on in its domain: its id goes without a DREQ (cm_destroy_id). */
		if (id->qp_type == IBV_QPT_XRC_RECV)
			break;
		mad_start(id, CM_ATTR_DREQ, id->mad);
		rocemu_put_be24(&id->mad[CM_DREQ_REMOTE_QPN], id->remote_qpn);
		mad_send(id->dev, id->dst.sin_addr.s_addr, id->mad);
		break;
	case CM_DREQ_RCVD:
		send_drep(id);
		break;
	default:
		break;
	}
	id->cm = CM_IDLE;
}

void cm_id_destroy(struct rocemu_cm_id *id)
{
	struct rocemu_list *n, *next;

	cm_abandon(id);
	/* Requests still waiting for this listener's accept go with it (the kernel's cma_cancel_listens). */
	for (n = id->emu->cm_ids_all.next; n != &id->emu->cm_ids_all; n = next) {
		struct rocemu_cm_id *child = rocemu_container_of(n, struct rocemu_cm_id, emu_node);

		next = n->next;
		if (child->listener != id)
			continue;
		if (next == &child->emu_node)
			next = next->next;
		child->listener = NULL;
		cm_abandon(child);
		cm_id_free(child);
	}
	cm_id_free(id);
}

/* A MAD waiting for an answer got none in time: resend it, or give up. */
static void cm_timer(void *arg)
{
	struct rocemu_cm_id *id = arg;

	id->timer = 0;
	if (id->cm == CM_TIMEWAIT) {
		cm_set_state(id, CM_IDLE);
		cm_event_queue(id, id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
		return;
	}
	if (id->retries_left) {
		id->retries_left--;
		rocemu_log(ROCEMU_LOG_DEBUG, "%s rdma_cm id %u: %s timed out, resending",
			   id->dev->name, id->handle, cm_attr_name(cm_mad_attr(id->mad)));
		mad_send(id->dev, id->dst.sin_addr.s_addr, id->mad);
		timer_arm(id, id->resend_ms);
		return;
	}
	rocemu_log(ROCEMU_LOG_INFO, "%s rdma_cm id %u: %s unanswered after %u retries",
		   id->dev->name, id->handle, cm_attr_name(cm_mad_attr(id->mad)),
		   id->max_cm_retries);
	switch (id->cm) {
	case CM_REQ_SENT:
	case CM_REP_SENT:
		cm_set_state(id, CM_IDLE);
		cm_event_queue(id, id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		break;
	case CM_DREQ_SENT:
		enter_timewait(id);
		id->state = CMA_DISCONNECT;
		cm_event_queue(id, id, RDMA_CM_EVENT_DISCONNECTED, -ETIMEDOUT);
		break;
	default:
		break;
	}
}

/* Copy n bytes of private data at p into an event's conn param. */
static void conn_private(struct ucma_abi_conn_param *c, const uint8_t *p, uint8_t n)
{
	memcpy(c->private_data, p, n);
	c->private_data_len = n;
}

/* The id a MAD names by our communication (or SIDR request) ID, if it is dev's and its peer is saddr. */
static struct rocemu_cm_id *id_named(struct rocemu_device *dev, uint32_t saddr, uint32_t comm)
{
	struct rocemu_list *n;

	for (n = dev->emu->cm_ids_all.next; n != &dev->emu->cm_ids_all; n = n->next) {
		struct rocemu_cm_id *id = rocemu_container_of(n, struct rocemu_cm_id, emu_node);

		if (id->local_comm_id == comm && id->dev == dev && id->dst.sin_addr.s_addr == saddr)
			return id;
	}
	return NULL;
}

/* Whether mad comes from the peer id already knows (its communication ID). */
static bool from_peer(const struct rocemu_cm_id *id, const uint8_t *mad)
{
	return rocemu_get_be32(&mad[CM_LOCAL_COMM_ID]) == id->remote_comm_id;
}

/* The connection a REQ from saddr made already (a resent REQ), or NULL. */
static struct rocemu_cm_id *req_seen(struct rocemu_device *dev, uint32_t saddr, uint32_t comm)
{
	struct rocemu_list *n;

	for (n = dev->emu->cm_ids_all.next; n != &dev->emu->cm_ids_all; n = n->next) {
		struct rocemu_cm_id *id = rocemu_container_of(n, struct rocemu_cm_id, emu_node);

		if (id->passive && id->dev == dev && id->remote_comm_id == comm &&
		    id->dst.sin_addr.s_addr == saddr)
			return id;
	}
	return NULL;
}

/* Requests of listener not yet reported or answered. */
static uint32_t pending_requests(const struct rocemu_cm_id *listener)
{
	const struct rocemu_list *n;
	uint32_t count = 0;

	for (n = listener->emu->cm_ids_all.next; n != &listener->emu->cm_ids_all; n = n->next)
		count += rocemu_container_of(n, struct rocemu_cm_id, emu_node)->listener == listener;
	return count;
}

/*
 * The passive id a request (REQ or SIDR REQ mad from the peer's id comm,
 * its CMA header at cma) makes on listener; NULL when the backlog is full
 * or memory short.
 */
static struct rocemu_cm_id *request_id_new(struct rocemu_cm_id *listener, struct rocemu_device *dev,
					   uint32_t saddr, uint32_t comm, const uint8_t *mad,
					   const uint8_t *cma)
{
	struct rocemu_cm_id *id;

	if (pending_requests(listener) >= listener->backlog ||
	    !(id = cm_id_new(listener->file, listener->uid, listener->ps, listener->qp_type)))
		return NULL;
	id->remote_comm_id = comm;
	id->passive = true;
	id->listener = listener;
	id->dev = dev;
	id->tos = listener->tos;
	id->src.sin_addr.s_addr = dev->ipv4;
	id->src.sin_port = listener->src.sin_port;
	id->dst.sin_addr.s_addr = saddr;
	memcpy(&id->dst.sin_port, &cma[CMA_HDR_OFF_PORT], sizeof(id->dst.sin_port));
	id->remote_tid = rocemu_get_be64(&mad[MAD_OFF_TID]);
	id->state = CMA_CONNECT;
	return id;
}

/* A SIDR REP refusing the SIDR REQ mad from saddr that found no listener. */
static void sidr_refuse(struct rocemu_device *dev, uint32_t saddr, const uint8_t *req, uint8_t status)
{
	uint8_t rep[CM_MAD_BYTES];

	cm_mad_init(rep, CM_ATTR_SIDR_REP, rocemu_get_be64(&req[MAD_OFF_TID]));
	rocemu_put_be32(&rep[CM_SIDR_REQUEST_ID], rocemu_get_be32(&req[CM_SIDR_REQUEST_ID]));
	rep[CM_SIDR_REP_STATUS] = status;
	rocemu_put_be64(&rep[CM_SIDR_REP_SERVICE_ID], rocemu_get_be64(&req[CM_SIDR_REQ_SERVICE_ID]));
	mad_send(dev, saddr, rep);
}

static bool rx_sidr_req(struct rocemu_device *dev, uint32_t saddr, const uint8_t *mad)
{
	const uint8_t *cma = &mad[CM_SIDR_REQ_PRIVATE_DATA];
	uint32_t reqid = rocemu_get_be32(&mad[CM_SIDR_REQUEST_ID]);
	struct rocemu_cm_id *listener, *id = req_seen(dev, saddr, reqid);
	struct ucma_abi_ud_param *ud;
	bool held;

	if (id) {		/* our SIDR REP was lost: send it again */
		if (cm_mad_attr(id->mad) != CM_ATTR_SIDR_REP)
			return false;
		mad_send(dev, saddr, id->mad);
		return true;
	}
	listener = listener_of(dev, rocemu_get_be64(&mad[CM_SIDR_REQ_SERVICE_ID]), cma, &held);
	if (!held) {		/* cm_sidr_req_handler: no listener of the service ID */
		if (!refuse_unlistened(dev, saddr))
			return false;
		sidr_refuse(dev, saddr, mad, CM_SIDR_UNSUPPORTED);
		return true;
	}
	/* The rdma_cm takes it for no id of its, or for one not UD: refused (cm_destroy_id). */
	if (!listener || listener->qp_type != IBV_QPT_UD ||
	    !(id = request_id_new(listener, dev, saddr, reqid, mad, cma))) {
		sidr_refuse(dev, saddr, mad, CM_SIDR_REJECT);
		return true;
	}
	id->mtu = (uint8_t)dev->active_mtu;
	cm_set_state(id, CM_REQ_RCVD);
	ud = &cm_event_queue(listener, id, RDMA_CM_EVENT_CONNECT_REQUEST, 0)->param.ud;
	memcpy(ud->private_data, &cma[CMA_HDR_BYTES], CM_SIDR_REQ_PRIVATE_BYTES - CMA_HDR_BYTES);
	ud->private_data_len = CM_SIDR_REQ_PRIVATE_BYTES - CMA_HDR_BYTES;
	return true;
}

static bool rx_sidr_rep(struct rocemu_cm_id *id, const uint8_t *mad)
{
	uint32_t qkey = rocemu_get_be32(&mad[CM_SIDR_REP_QKEY]);
	uint8_t status = mad[CM_SIDR_REP_STATUS];
	struct ucma_abi_ud_param *ud;

	if (id->qp_type != IBV_QPT_UD || id->cm != CM_REQ_SENT)
		return false;
	timer_stop(id);
	cm_set_state(id, CM_IDLE);
	if (status != CM_SIDR_SUCCESS) {
		ud = &cm_event_queue(id, id, RDMA_CM_EVENT_UNREACHABLE, status)->param.ud;
	} else if (!qkey || (id->qkey && id->qkey != qkey)) {
		/* cma_set_qkey: none, or another than the id's QP took. */
		ud = &cm_event_queue(id, id, RDMA_CM_EVENT_ADDR_ERROR, -EINVAL)->param.ud;
	} else {
		id->qkey = qkey;
		ud = &cm_event_queue(id, id, RDMA_CM_EVENT_ESTABLISHED, 0)->param.ud;
		ud->qp_num = rocemu_get_be24(&mad[CM_SIDR_REP_QPN]);
		ud->qkey = qkey;
		cm_fill_ah(id, &ud->ah_attr);
	}
	memcpy(ud->private_data, &mad[CM_SIDR_REP_PRIVATE_DATA], CM_SIDR_REP_PRIVATE_BYTES);
	ud->private_data_len = CM_SIDR_REP_PRIVATE_BYTES;
	return true;
}

/* The QP type a REQ's transport is for at the receiver (cm_req_get_qp_type), 0 for none. */
static uint8_t req_qp_type(enum cm_transport t)
{
	switch (t) {
	case CM_TRANSPORT_RC:
		return IBV_QPT_RC;
	case CM_TRANSPORT_UC:
		return IBV_QPT_UC;
	case CM_TRANSPORT_XRC:
		return IBV_QPT_XRC_RECV;	/* an initiator's REQ is for a target */
	default:
		return 0;
	}
}

static bool rx_req(struct rocemu_device *dev, uint32_t saddr, const uint8_t *mad)
{
	const uint8_t *cma = &mad[CM_REQ_PRIVATE_DATA];
	struct rocemu_cm_id *listener, *id;
	struct ucma_abi_event_resp *ev;
	struct ucma_abi_conn_param *c;
	struct cm_req req;
	bool held;

	cm_req_get(mad, &req);
	id = req_seen(dev, saddr, req.local_comm_id);
	if (id) {		/* our REP was lost: send it again; a REQ still unanswered waits */
		if (id->cm != CM_REP_SENT)
			return false;
		mad_send(dev, saddr, id->mad);
		return true;
	}
	listener = listener_of(dev, req.service_id, cma, &held);
	if (!held) {		/* cm_match_req: no listener of the service ID */
		if (!refuse_unlistened(dev, saddr))
			return false;
		reject_req(dev, saddr, mad, CM_REJ_INVALID_SERVICE_ID);
		return true;
	}
	/*
	 * The rdma_cm finds no id for it, or one of another QP type than the
	 * REQ's transport (cma_ib_check_req_qp_type), or has no room: the
	 * consumer's refusal, as cm_destroy_id sends it for a REQ not taken.
	 */
	if (!listener || listener->qp_type != req_qp_type(req.transport) ||
	    !(id = request_id_new(listener, dev, saddr, req.local_comm_id, mad, cma))) {
		reject_req(dev, saddr, mad, CM_REJ_CONSUMER_DEFINED);
		return true;
	}
	id->remote_qpn = req.local_qpn;
	/* The peer's receive queue starts there: this side's sends do (cm_req_handler's sq_psn). */
	id->sq_psn = req.starting_psn;
	/* What the peer's side offers is what this side may use, crosswise. */
	id->initiator_depth = req.responder_resources;
	id->responder_resources = req.initiator_depth;
	id->retry_count = req.retry_count;
	id->rnr_retry_count = req.rnr_retry_count;
	id->srq = req.srq;
	id->flow_control = req.flow_control;
	/* The REQ's path MTU, but not past this port's active MTU. */
	id->mtu = req.mtu >= IBV_MTU_256 && req.mtu < dev->active_mtu ? req.mtu :
									(uint8_t)dev->active_mtu;
	/* The path's packet life is the REQ's ACK timeout less one (cm_format_paths_from_req). */
	id->timeout = req.local_ack_timeout ? req.local_ack_timeout : 1;
	/* The REP waits as long as the REQ says its sender answers, and is resent as often. */
	resend_policy(id, cm_time_to_ms(req.local_cm_response_timeout), req.max_cm_retries);
	cm_set_state(id, CM_REQ_RCVD);
	ev = cm_event_queue(listener, id, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	ev->ece.vendor_id = req.ece_vendor_id;
	ev->ece.attr_mod = req.ece_options;
	c = &ev->param.conn;
	conn_private(c, &cma[CMA_HDR_BYTES], CM_REQ_PRIVATE_BYTES - CMA_HDR_BYTES);
	c->responder_resources = id->responder_resources;
	c->initiator_depth = id->initiator_depth;
	c->flow_control = id->flow_control;
	c->retry_count = id->retry_count;
	c->rnr_retry_count = id->rnr_retry_count;
	c->srq = id->srq;
	c->qp_num = id->remote_qpn;
	return true;
}

static bool rx_rep(struct rocemu_cm_id *id, const uint8_t *mad)
{
	struct ucma_abi_event_resp *ev;
	struct ucma_abi_conn_param *c;
	uint8_t rtu[CM_MAD_BYTES];
	struct cm_rep rep;

	if (id->cm == CM_ESTABLISHED && from_peer(id, mad)) {	/* our RTU was lost */
		mad_send(id->dev, id->dst.sin_addr.s_addr, mad_start(id, CM_ATTR_RTU, rtu));
		return true;
	}
	if (id->cm != CM_REQ_SENT)
		return false;
	cm_rep_get(mad, &rep, id->qp_type == IBV_QPT_XRC_SEND);
	timer_stop(id);
	id->remote_comm_id = rep.local_comm_id;
	id->remote_qpn = rep.qpn;
	id->sq_psn = rep.starting_psn;	/* cm_rep_handler's sq_psn */
	/* What the peer accepted is what this side uses, crosswise (cm_rep_handler). */
	id->initiator_depth = rep.responder_resources;
	id->responder_resources = rep.initiator_depth;
	id->rnr_retry_count = rep.rnr_retry_count;
	id->timeout = cm_ack_timeout(rep.target_ack_delay, CMA_IBOE_PACKET_LIFETIME);
	cm_set_state(id, CM_REP_RCVD);
	ev = cm_event_queue(id, id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	ev->ece.vendor_id = rep.ece_vendor_id;
	ev->ece.attr_mod = rep.ece_options;
	c = &ev->param.conn;
	conn_private(c, &mad[CM_REP_PRIVATE_DATA], CM_REP_PRIVATE_BYTES);
	c->responder_resources = rep.initiator_depth;
	c->initiator_depth = rep.responder_resources;
	c->flow_control = rep.flow_control;
	c->rnr_retry_count = id->rnr_retry_count;
	c->srq = rep.srq;
	c->qp_num = id->remote_qpn;
	return true;
}

static bool rx_rtu(struct rocemu_cm_id *id, const uint8_t *mad)
{
	if (id->cm != CM_REP_SENT || !from_peer(id, mad))
		return false;
	timer_stop(id);
	cm_set_state(id, CM_ESTABLISHED);
	cm_event_queue(id, id, RDMA_CM_EVENT_ESTABLISHED, 0);
	return true;
}

static bool rx_rej(struct rocemu_cm_id *id, const uint8_t *mad)
{
	struct ucma_abi_conn_param *c;
	uint16_t reason = rocemu_get_be16(&mad[CM_REJ_REASON]);

	if (id->cm != CM_REQ_SENT && !((id->cm == CM_REP_SENT || id->cm == CM_REP_RCVD) &&
					from_peer(id, mad)))
		return false;
	timer_stop(id);
	id->listener = NULL;
	cm_set_state(id, CM_IDLE);
	c = &cm_event_queue(id, id, RDMA_CM_EVENT_REJECTED, reason)->param.conn;
	conn_private(c, &mad[CM_REJ_PRIVATE_DATA], CM_REJ_PRIVATE_BYTES);
	return true;
}

/* A DREP for a DREQ that names no connection of ours (the kernel's cm_issue_drep). */
static void answer_stray_dreq(struct rocemu_device *dev, uint32_t saddr, const uint8_t *dreq)
{
	uint8_t drep[CM_MAD_BYTES];

	cm_mad_init(drep, CM_ATTR_DREP, rocemu_get_be64(&dreq[MAD_OFF_TID]));
	rocemu_put_be32(&drep[CM_LOCAL_COMM_ID], rocemu_get_be32(&dreq[CM_REMOTE_COMM_ID]));
	rocemu_put_be32(&drep[CM_REMOTE_COMM_ID], rocemu_get_be32(&dreq[CM_LOCAL_COMM_ID]));
	mad_send(dev, saddr, drep);
}

static bool rx_dreq(struct rocemu_device *dev, uint32_t saddr, struct rocemu_cm_id *id,
		    const uint8_t *mad)
{
	if (!id || !from_peer(id, mad)) {
		answer_stray_dreq(dev, saddr, mad);
		return true;
	}
	/* A DREQ for another QP than the connection's is not for it (the kernel's cm_dreq_handler). */
	if (rocemu_get_be24(&mad[CM_DREQ_REMOTE_QPN]) != id->local_qpn)
		return false;
	id->remote_tid = rocemu_get_be64(&mad[MAD_OFF_TID]);	/* the DREP echoes it */
	switch (id->cm) {
	case CM_REP_SENT:	/* the RTU was lost, the DREQ proves the peer established */
	case CM_ESTABLISHED:
		timer_stop(id);
		cm_set_state(id, CM_DREQ_RCVD);
		id->state = CMA_DISCONNECT;
		cm_event_queue(id, id, RDMA_CM_EVENT_DISCONNECTED, 0);
		return true;
	case CM_DREQ_SENT:	/* both sides ended it at once: each answers the other */
	case CM_TIMEWAIT:	/* our DREP was lost */
		send_drep(id);
		return true;
	default:
		return false;
	}
}

static bool rx_drep(struct rocemu_cm_id *id, const uint8_t *mad)
{
	if (id->cm != CM_DREQ_SENT || !from_peer(id, mad))
		return false;
	enter_timewait(id);
	id->state = CMA_DISCONNECT;
	cm_event_queue(id, id, RDMA_CM_EVENT_DISCONNECTED, 0);
	return true;
}

/*
 * A MAD of a connection (REP, RTU, REJ, DREQ, DREP) for the id it names by
 * our communication ID: whether it acted on it. UD ids have no connection
 * (SIDR only), as the kernel's SIDR ids take none of these.
 */
static bool rx_conn_mad(struct rocemu_device *dev, uint32_t saddr, uint16_t attr,
			const uint8_t *mad)
{
	struct rocemu_cm_id *id = id_named(dev, saddr, rocemu_get_be32(&mad[CM_REMOTE_COMM_ID]));

	if (id && id->qp_type == IBV_QPT_UD)
		return false;
	if (attr == CM_ATTR_DREQ)
		return rx_dreq(dev, saddr, id, mad);
	if (!id)
		return false;	/* stale: its id is gone */
	switch (attr) {
	case CM_ATTR_REP:
		return rx_rep(id, mad);
	case CM_ATTR_RTU:
		return rx_rtu(id, mad);
	case CM_ATTR_REJ:
		return rx_rej(id, mad);
	case CM_ATTR_DREP:
		return rx_drep(id, mad);
	default:	/* MRA: the peer asks for patience; our retries already wait */
		return false;
	}
}

/* A MAD of attribute attr from saddr: whether it was acted on. */
static bool rx_mad(struct rocemu_device *dev, uint32_t saddr, uint16_t attr, const uint8_t *mad)
{
	struct rocemu_cm_id *id;

	switch (attr) {
	case CM_ATTR_REQ:
		return rx_req(dev, saddr, mad);
	case CM_ATTR_SIDR_REQ:
		return rx_sidr_req(dev, saddr, mad);
	case CM_ATTR_SIDR_REP:
		id = id_named(dev, saddr, rocemu_get_be32(&mad[CM_SIDR_REQUEST_ID]));
		return id && rx_sidr_rep(id, mad);
	case CM_ATTR_MRA:
	case CM_ATTR_REJ:
	case CM_ATTR_REP:
	case CM_ATTR_RTU:
	case CM_ATTR_DREQ:
	case CM_ATTR_DREP:
		return rx_conn_mad(dev, saddr, attr, mad);
	default:
		return false;
	}
}

/* A datagram for QP1 of dev. */
static void cm_rx(struct rocemu_device *dev, const struct rocemu_pkt *pkt)
{
	const uint8_t *deth = pkt->bth + ROCEMU_BTH_BYTES, *mad = pkt->payload;
	char from[INET_ADDRSTRLEN];
	uint16_t attr;

	inet_ntop(AF_INET, &pkt->saddr, from, sizeof(from));
	if (pkt->opcode != ROCEMU_OP_UD_SEND_ONLY || rocemu_deth_qkey(deth) != CM_GSI_QKEY ||
	    !cm_mad_valid(mad, pkt->paylen)) {
		dev->counters.rx_cm_dropped++;
		rocemu_log(ROCEMU_LOG_DEBUG, "%s cm rx drop from %s: not a CM MAD for QP1",
			   dev->name, from);
		return;
	}
	attr = cm_mad_attr(mad);
	if (rx_mad(dev, pkt->saddr, attr, mad)) {
		rocemu_log(ROCEMU_LOG_DEBUG, "%s cm rx %s comm 0x%08x from %s", dev->name,
			   cm_attr_name(attr), rocemu_get_be32(&mad[CM_LOCAL_COMM_ID]), from);
		return;
	}
	dev->counters.rx_cm_dropped++;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s cm rx drop %s comm 0x%08x from %s: no id in a state for it",
		   dev->name, cm_attr_name(attr), rocemu_get_be32(&mad[CM_LOCAL_COMM_ID]), from);
}
