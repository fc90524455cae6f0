/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Forged and truncated CM MADs (REQ, MRA, REJ, REP, RTU, DREQ, DREP, SIDR
 * REQ and REP) at rocemud's QP1, sent by a fake peer from a UDP socket of
 * this program on port 4791 with a correct ICRC, as any host could:
 *
 * - short MADs, wrong base or class version, class, method, Q_Key,
 *   opcode, unknown attributes, MADs naming no id: dropped, counted in
 *   rx_cm_dropped, and nothing reaches this program's listeners;
 * - REQs and SIDR REQs for a service nobody listens on: refused (REJ
 *   "invalid service ID", SIDR REP "unsupported"); for the listeners' port
 *   with a bad CMA header or another transport: refused by the consumer
 *   (REJ "consumer defined", SIDR REP "rejected"), as the kernel's ib_cm
 *   finds the port's listener and the rdma_cm then no id for the request;
 * - a connection the fake peer makes to this program's listener: MADs
 *   that do not fit it (REJ, RTU, DREP once established, a REP or RTU from
 *   another comm ID, a DREQ for another QPN, MRA, SIDR REP, short ones)
 *   change nothing; a lost-RTU REP is answered by an RTU, a DREQ naming
 *   another peer's comm ID by a DREP; then the real DREQ disconnects it;
 * - a UD id's SIDR REQ: connection MADs naming its request ID are dropped,
 *   the SIDR REP naming it resolves it.
 *
 * usage: cm_forged SERVER_ADDR PEER_ADDR ROCEMU PORT
 *   SERVER_ADDR: rocemu0's address; PEER_ADDR: a free loopback address for
 *   the fake peer (port 4791); ROCEMU: the CLI; PORT: the listeners' port.
 * Prints "ok: ..." per check and "N failed" last; exits 0 when none failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>

#include "emulator/cm/cm_mad.h"
#include "tests/e2e/harness/forge.h"
#include "net/roce/roce_opcode.h"
#include "net/roce/roce_text.h"
#include "net/udp/udp_port.h"
#include "tests/e2e/harness/verbs_pair.h"

#define EVENT_WAIT_MS 10000
#define ANSWER_WAIT_MS 10000
#define DEVICE "rocemu0"
#define PEER_CM_PORT 40000	/* the fake peer's RDMA CM port, in its CMA headers */
#define PEER_QPN 0x00abcd
#define ACCEPT_QPN 0x000123
#define SIDR_QPN 0x000456
#define UD_DST_PORT 5000
#define MAD_AT (ROCEMU_BTH_BYTES + ROCEMU_DETH_BYTES)	/* in a UD SEND to QP1 */

static struct forge peer;
static uint32_t server_addr, peer_addr;	/* network order */
static uint16_t port;
static struct rdma_event_channel *ch;
static long long dropped_base;
static unsigned int dropped_sent;	/* forged MADs that must be dropped so far */
static uint8_t pkt[FORGE_MAX];
static uint64_t next_tid = 1;

/* A MAD of attr with fields zeroed: the common header as the CM sends it. */
static void mad_init(uint8_t *mad, uint16_t attr)
{
	memset(mad, 0, CM_MAD_BYTES);
	mad[MAD_OFF_BASE_VERSION] = MAD_BASE_VERSION;
	mad[MAD_OFF_CLASS] = MAD_CLASS_CM;
	mad[MAD_OFF_CLASS_VERSION] = MAD_CM_CLASS_VERSION;
	mad[MAD_OFF_METHOD] = MAD_METHOD_SEND;
	rocemu_put_be64(&mad[MAD_OFF_TID], next_tid++);
	rocemu_put_be16(&mad[MAD_OFF_ATTR_ID], attr);
}

/* A connection MAD from the peer's comm ID local to ours remote. */
static void conn_mad(uint8_t *mad, uint16_t attr, uint32_t local, uint32_t remote)
{
	mad_init(mad, attr);
	rocemu_put_be32(&mad[CM_LOCAL_COMM_ID], local);
	rocemu_put_be32(&mad[CM_REMOTE_COMM_ID], remote);
}

/* Send len bytes of mad to QP1 of the server, as opcode with Q_Key qkey. */
static void send_raw(const uint8_t *mad, size_t len, uint8_t opcode, uint32_t qkey)
{
	size_t n = forge_build(pkt, opcode, CM_GSI_QPN, (uint32_t)next_tid, false, len, 0);
	uint8_t *deth = rocemu_pkt_deth(pkt);

	rocemu_deth_set_qkey(deth, qkey);
	rocemu_deth_set_src_qp(deth, CM_GSI_QPN);
	memcpy(pkt + n - len - rocemu_pad_bytes(len), mad, len);
	forge_send(&peer, server_addr, pkt, n);
}

static void send_mad(const uint8_t *mad)
{
	send_raw(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
}

/* A MAD that must be dropped: sent and counted. */
static void send_dropped(const uint8_t *mad, size_t len, uint8_t opcode, uint32_t qkey)
{
	send_raw(mad, len, opcode, qkey);
	dropped_sent++;
}

/* The next MAD of attr the server sends the peer into mad; others (resends) are skipped. */
static bool answer(uint16_t attr, uint8_t *mad, const char *what)
{
	uint8_t buf[2048];
	struct timespec start;
	ssize_t n;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (elapsed_ms(&start) < ANSWER_WAIT_MS) {
		n = forge_recv(&peer, buf, sizeof(buf), 100);
		if (n < (ssize_t)(MAD_AT + CM_MAD_BYTES) || buf[0] != ROCEMU_OP_UD_SEND_ONLY ||
		    cm_mad_attr(buf + MAD_AT) != attr)
			continue;
		memcpy(mad, buf + MAD_AT, CM_MAD_BYTES);
		check(true, "%s: the server answers %s", what, rocemu_cm_attr_name(attr));
		return true;
	}
	check(false, "%s: no %s from the server", what, rocemu_cm_attr_name(attr));
	return false;
}

/*
 * Everything sent so far has been handled: a DREQ naming nobody is answered
 * by a DREP (the MADs of one peer are taken in order); then every MAD that
 * had to be dropped is counted, no more, and this program has no event.
 */
static void all_dropped(const char *what)
{
	uint8_t mad[CM_MAD_BYTES];
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	long long dropped;

	conn_mad(mad, CM_ATTR_DREQ, 0x7e57, 0x7e57);
	send_mad(mad);
	answer(CM_ATTR_DREP, mad, what);
	dropped = cli_stat(DEVICE, "rx_cm_dropped") - dropped_base;
	check(dropped == dropped_sent, "%s: rx_cm_dropped counts %lld of the %u dropped", what,
	      dropped, dropped_sent);
	check(poll(&pfd, 1, 0) == 0, "%s: no RDMA CM event came of them", what);
}

static struct rdma_cm_event *next_event(enum rdma_cm_event_type type, const char *what)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev = NULL;

	if (poll(&pfd, 1, EVENT_WAIT_MS) != 1 || rdma_get_cm_event(ch, &ev))
		ev = NULL;
	check(ev && ev->event == type, "%s: %s (got %s)", what, rdma_event_str(type),
	      ev ? rdma_event_str(ev->event) : "nothing");
	if (ev && ev->event != type) {
		rdma_ack_cm_event(ev);
		return NULL;
	}
	return ev;
}

static struct rdma_cm_id *listen_on(enum rdma_port_space ps)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = server_addr };
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, ps) || rdma_bind_addr(id, (struct sockaddr *)&a) ||
	    rdma_listen(id, 4)) {
		check(false, "listening on port %u: %s", port, strerror(errno));
		exit(1);
	}
	return id;
}

/* The CMA header of the fake peer's request to the server at cma. */
static void cma_put(uint8_t *cma)
{
	uint16_t p = htons(PEER_CM_PORT);

	cma[CMA_HDR_OFF_VERSION] = CMA_HDR_VERSION;
	cma[CMA_HDR_OFF_IP_VERSION] = CMA_HDR_IPV4;
	memcpy(&cma[CMA_HDR_OFF_PORT], &p, sizeof(p));
	memcpy(&cma[CMA_HDR_OFF_SRC_V4], &peer_addr, 4);
	memcpy(&cma[CMA_HDR_OFF_DST_V4], &server_addr, 4);
}

/* A REQ of the peer's comm ID to the RC listener, as the kernel's CM makes it. */
static void req_mad(uint8_t *mad, uint32_t comm)
{
	mad_init(mad, CM_ATTR_REQ);
	rocemu_put_be32(&mad[CM_LOCAL_COMM_ID], comm);
	rocemu_put_be64(&mad[CM_REQ_SERVICE_ID], CMA_SERVICE_ID_PREFIX |
			cma_service_id(RDMA_PS_TCP, port));
	rocemu_put_be24(&mad[CM_REQ_LOCAL_QPN], PEER_QPN);
	mad[CM_REQ_RESPONDER_RESOURCES] = 1;
	mad[CM_REQ_INITIATOR_DEPTH] = 1;
	mad[CM_REQ_TIMEOUT_TYPE_FC] = 20 << 3;
	rocemu_put_be24(&mad[CM_REQ_STARTING_PSN], 0x1000);
	mad[CM_REQ_TIMEOUT_RETRY] = 20 << 3 | 7;
	rocemu_put_be16(&mad[CM_REQ_PKEY], CM_PKEY_DEFAULT);
	mad[CM_REQ_MTU_RNR] = IBV_MTU_1024 << 4 | 7;
	mad[CM_REQ_RETRIES_SRQ] = 15 << 4;
	mad[CM_REQ_PRIMARY_ACK_TIMEOUT] = 18 << 3;
	cma_put(&mad[CM_REQ_PRIVATE_DATA]);
}

static void sidr_req_mad(uint8_t *mad, uint32_t reqid)
{
	mad_init(mad, CM_ATTR_SIDR_REQ);
	rocemu_put_be32(&mad[CM_SIDR_REQUEST_ID], reqid);
	rocemu_put_be16(&mad[CM_SIDR_REQ_PKEY], CM_PKEY_DEFAULT);
	rocemu_put_be64(&mad[CM_SIDR_REQ_SERVICE_ID], CMA_SERVICE_ID_PREFIX |
			cma_service_id(RDMA_PS_UDP, port));
	cma_put(&mad[CM_SIDR_REQ_PRIVATE_DATA]);
}

static const uint16_t every_attr[] = {
	CM_ATTR_REQ, CM_ATTR_MRA, CM_ATTR_REJ, CM_ATTR_REP, CM_ATTR_RTU,
	CM_ATTR_DREQ, CM_ATTR_DREP, CM_ATTR_SIDR_REQ, CM_ATTR_SIDR_REP,
};
#define N_ATTRS (sizeof(every_attr) / sizeof(every_attr[0]))

/* Short MADs of every attribute, bad headers, unknown attributes, MADs naming no id. */
static void malformed(void)
{
	static const size_t short_lens[] = { 0, MAD_HDR_BYTES - 1, MAD_HDR_BYTES, 100,
					     CM_MAD_BYTES - 1 };
	static const uint16_t unknown_attrs[] = { 0x0000, 0x0001, 0x0019, 0x0020, 0xffff };
	uint8_t mad[CM_MAD_BYTES];
	size_t i, j;

	for (i = 0; i < N_ATTRS; i++) {
		for (j = 0; j < sizeof(short_lens) / sizeof(short_lens[0]); j++) {
			if (every_attr[i] == CM_ATTR_REQ)
				req_mad(mad, 0x5000 + (uint32_t)j);
			else if (every_attr[i] == CM_ATTR_SIDR_REQ)
				sidr_req_mad(mad, 0x5000 + (uint32_t)j);
			else
				conn_mad(mad, every_attr[i], 0x5000, 0x5000);
			send_dropped(mad, short_lens[j], ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
		}
	}
	/* A REQ to the listener, each time with one header field wrong. */
	req_mad(mad, 0x6001);
	mad[MAD_OFF_BASE_VERSION] = 2;
	send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	req_mad(mad, 0x6002);
	mad[MAD_OFF_CLASS] = 0x04;	/* performance management */
	send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	req_mad(mad, 0x6003);
	mad[MAD_OFF_CLASS_VERSION] = 1;
	send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	req_mad(mad, 0x6004);
	mad[MAD_OFF_METHOD] = 0x01;	/* Get */
	send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	req_mad(mad, 0x6005);
	send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, 0x12345678);
	req_mad(mad, 0x6006);
	send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY_WITH_IMMEDIATE, CM_GSI_QKEY);
	for (i = 0; i < sizeof(unknown_attrs) / sizeof(unknown_attrs[0]); i++) {
		conn_mad(mad, unknown_attrs[i], 0x7000, 0x7000);
		send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	}
	/* Well formed, naming no id of the server's. */
	for (i = 0; i < N_ATTRS; i++) {
		if (every_attr[i] == CM_ATTR_REQ || every_attr[i] == CM_ATTR_SIDR_REQ ||
		    every_attr[i] == CM_ATTR_DREQ)
			continue;	/* requests make ids; a stray DREQ is answered */
		conn_mad(mad, every_attr[i], 0x8000 + (uint32_t)i, 0x8000 + (uint32_t)i);
		send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	}
	all_dropped("malformed and stray MADs");
}

/* REQs and SIDR REQs the listeners cannot take: refused, as the kernel refuses them. */
static void refused(void)
{
	static const char *const rc_defects[] = {
		"CMA header version 1", "CMA header of IPv6", "CMA header for another address",
		"transport UC", "transport XRC", "transport RD",
		"a service ID not of the RDMA CM", "a port space nobody listens in",
	};
	/* The first six reach the port's listener (ib_cm's), the rest no listener at all. */
	static const uint16_t reasons[] = {
		CM_REJ_CONSUMER_DEFINED, CM_REJ_CONSUMER_DEFINED, CM_REJ_CONSUMER_DEFINED,
		CM_REJ_CONSUMER_DEFINED, CM_REJ_CONSUMER_DEFINED, CM_REJ_CONSUMER_DEFINED,
		CM_REJ_INVALID_SERVICE_ID, CM_REJ_INVALID_SERVICE_ID,
	};
	uint8_t mad[CM_MAD_BYTES], ans[CM_MAD_BYTES];
	char what[96];
	uint32_t comm;
	size_t i;

	for (i = 0; i < sizeof(rc_defects) / sizeof(rc_defects[0]); i++) {
		comm = 0x9000 + (uint32_t)i;
		req_mad(mad, comm);
		switch (i) {
		case 0: mad[CM_REQ_PRIVATE_DATA + CMA_HDR_OFF_VERSION] = 1; break;
		case 1: mad[CM_REQ_PRIVATE_DATA + CMA_HDR_OFF_IP_VERSION] = 0x60; break;
		case 2: memcpy(&mad[CM_REQ_PRIVATE_DATA + CMA_HDR_OFF_DST_V4], &peer_addr, 4); break;
		case 3: mad[CM_REQ_TIMEOUT_TYPE_FC] |= CM_TST_UC << 1; break;
		case 4:
			mad[CM_REQ_TIMEOUT_TYPE_FC] |= CM_TST_EXTENDED << 1;
			mad[CM_REQ_RETRIES_SRQ] |= CM_ETT_XRC;
			break;
		case 5: mad[CM_REQ_TIMEOUT_TYPE_FC] |= 2 << 1; break;
		case 6: rocemu_put_be64(&mad[CM_REQ_SERVICE_ID], 0x1234567800000000ull | port); break;
		default: rocemu_put_be64(&mad[CM_REQ_SERVICE_ID], CMA_SERVICE_ID_PREFIX |
					 cma_service_id(RDMA_PS_IPOIB, port)); break;
		}
		send_mad(mad);
		snprintf(what, sizeof(what), "a REQ with %s", rc_defects[i]);
		if (answer(CM_ATTR_REJ, ans, what))
			check(rocemu_get_be16(&ans[CM_REJ_REASON]) == reasons[i] &&
			      rocemu_get_be32(&ans[CM_REMOTE_COMM_ID]) == comm,
			      "%s: REJ reason %u (want %u) to comm 0x%x", what,
			      rocemu_get_be16(&ans[CM_REJ_REASON]), reasons[i],
			      rocemu_get_be32(&ans[CM_REMOTE_COMM_ID]));
	}
	sidr_req_mad(mad, 0x9100);
	mad[CM_SIDR_REQ_PRIVATE_DATA + CMA_HDR_OFF_IP_VERSION] = 0x60;
	send_mad(mad);
	if (answer(CM_ATTR_SIDR_REP, ans, "a SIDR REQ with a CMA header of IPv6"))
		check(ans[CM_SIDR_REP_STATUS] == CM_SIDR_REJECT &&
		      rocemu_get_be32(&ans[CM_SIDR_REQUEST_ID]) == 0x9100,
		      "a SIDR REQ with a CMA header of IPv6: status %u (rejected)",
		      ans[CM_SIDR_REP_STATUS]);
	sidr_req_mad(mad, 0x9101);
	rocemu_put_be64(&mad[CM_SIDR_REQ_SERVICE_ID], CMA_SERVICE_ID_PREFIX |
			cma_service_id(RDMA_PS_UDP, (uint16_t)(port + 1)));
	send_mad(mad);
	if (answer(CM_ATTR_SIDR_REP, ans, "a SIDR REQ for a port nobody listens on"))
		check(ans[CM_SIDR_REP_STATUS] == CM_SIDR_UNSUPPORTED &&
		      rocemu_get_be32(&ans[CM_SIDR_REQUEST_ID]) == 0x9101,
		      "a SIDR REQ for a port nobody listens on: status %u (unsupported)",
		      ans[CM_SIDR_REP_STATUS]);
	all_dropped("refused requests");
}

/* The fake peer connects to the RC listener; forged MADs at the connection change nothing. */
static void connection(void)
{
	const uint32_t comm = 0xc0ffee01;
	struct rdma_conn_param param = { .qp_num = ACCEPT_QPN, .responder_resources = 1,
					 .initiator_depth = 1, .rnr_retry_count = 7 };
	uint8_t mad[CM_MAD_BYTES], ans[CM_MAD_BYTES];
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	uint32_t ours;
	size_t i;

	req_mad(mad, comm);
	send_mad(mad);
	ev = next_event(RDMA_CM_EVENT_CONNECT_REQUEST, "the peer's REQ");
	if (!ev)
		return;
	id = ev->id;
	check(ev->param.conn.qp_num == PEER_QPN, "the request carries the peer's QPN 0x%06x",
	      ev->param.conn.qp_num);
	rdma_ack_cm_event(ev);
	check(rdma_accept(id, &param) == 0, "rdma_accept: %s", strerror(errno));
	if (!answer(CM_ATTR_REP, ans, "the accepted request"))
		return;
	ours = rocemu_get_be32(&ans[CM_LOCAL_COMM_ID]);
	check(rocemu_get_be32(&ans[CM_REMOTE_COMM_ID]) == comm &&
	      rocemu_get_be24(&ans[CM_REP_LOCAL_QPN]) == ACCEPT_QPN,
	      "the REP answers comm 0x%x with QPN 0x%06x", rocemu_get_be32(&ans[CM_REMOTE_COMM_ID]),
	      rocemu_get_be24(&ans[CM_REP_LOCAL_QPN]));

	conn_mad(mad, CM_ATTR_RTU, comm + 1, ours);	/* another peer's comm ID */
	send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	conn_mad(mad, CM_ATTR_RTU, comm, ours);
	send_dropped(mad, CM_MAD_BYTES - 1, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	all_dropped("RTUs that do not fit the REP");
	send_mad(mad);
	ev = next_event(RDMA_CM_EVENT_ESTABLISHED, "the peer's RTU");
	if (ev)
		rdma_ack_cm_event(ev);

	/* REJ, RTU, DREP, MRA once established; a REP from another comm ID; a SIDR REP naming the RC id. */
	const struct { uint16_t attr; uint32_t local, remote; } unfit[] = {
		{ CM_ATTR_REJ, comm, ours }, { CM_ATTR_REP, comm + 1, ours },
		{ CM_ATTR_RTU, comm, ours }, { CM_ATTR_DREP, comm, ours },
		{ CM_ATTR_MRA, comm, ours }, { CM_ATTR_SIDR_REP, ours, 0 },
	};
	for (i = 0; i < sizeof(unfit) / sizeof(unfit[0]); i++) {
		conn_mad(mad, unfit[i].attr, unfit[i].local, unfit[i].remote);
		send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	}
	sidr_req_mad(mad, comm);	/* the RC REQ's comm ID again, as a SIDR request */
	send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	conn_mad(mad, CM_ATTR_DREQ, comm, ours);
	rocemu_put_be24(&mad[CM_DREQ_REMOTE_QPN], ACCEPT_QPN + 1);	/* another QP */
	send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	rocemu_put_be24(&mad[CM_DREQ_REMOTE_QPN], ACCEPT_QPN);
	mad[MAD_OFF_CLASS_VERSION] = 1;
	send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	mad[MAD_OFF_CLASS_VERSION] = MAD_CM_CLASS_VERSION;
	send_dropped(mad, MAD_HDR_BYTES + 8, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	all_dropped("MADs that do not fit the established connection");

	conn_mad(mad, CM_ATTR_REP, comm, ours);	/* as if our RTU was lost */
	send_mad(mad);
	if (answer(CM_ATTR_RTU, ans, "a repeated REP"))
		check(rocemu_get_be32(&ans[CM_REMOTE_COMM_ID]) == comm, "the RTU is to comm 0x%x",
		      rocemu_get_be32(&ans[CM_REMOTE_COMM_ID]));
	conn_mad(mad, CM_ATTR_DREQ, comm + 1, ours);	/* another peer's comm ID */
	rocemu_put_be24(&mad[CM_DREQ_REMOTE_QPN], ACCEPT_QPN);
	send_mad(mad);
	answer(CM_ATTR_DREP, ans, "a DREQ of another peer's comm ID (answered as stray)");
	all_dropped("answered MADs");

	conn_mad(mad, CM_ATTR_DREQ, comm, ours);
	rocemu_put_be24(&mad[CM_DREQ_REMOTE_QPN], ACCEPT_QPN);
	send_mad(mad);
	ev = next_event(RDMA_CM_EVENT_DISCONNECTED, "the peer's DREQ");
	if (ev)
		rdma_ack_cm_event(ev);
	check(rdma_disconnect(id) == 0, "rdma_disconnect after the DREQ: %s", strerror(errno));
	if (answer(CM_ATTR_DREP, ans, "the disconnect"))
		check(rocemu_get_be32(&ans[CM_REMOTE_COMM_ID]) == comm, "the DREP is to comm 0x%x",
		      rocemu_get_be32(&ans[CM_REMOTE_COMM_ID]));
	/* Timewait lasts the REQ's ACK timeout; its end comes before anything else happens. */
	ev = next_event(RDMA_CM_EVENT_TIMEWAIT_EXIT, "the end of timewait");
	if (ev)
		rdma_ack_cm_event(ev);
}

/* A UD id's SIDR REQ to the fake peer: connection MADs naming it are dropped, the SIDR REP taken. */
static void sidr(void)
{
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_addr.s_addr = server_addr };
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(UD_DST_PORT),
				   .sin_addr.s_addr = peer_addr };
	struct rdma_conn_param param = { .qp_num = 0x000789 };
	static const uint16_t conn_attrs[] = { CM_ATTR_REP, CM_ATTR_REJ, CM_ATTR_RTU,
					       CM_ATTR_DREQ, CM_ATTR_DREP, CM_ATTR_MRA };
	uint8_t mad[CM_MAD_BYTES], req[CM_MAD_BYTES];
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	uint32_t reqid;
	size_t i;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_UDP) ||
	    rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, EVENT_WAIT_MS)) {
		check(false, "a UD id resolving the peer: %s", strerror(errno));
		return;
	}
	if (!(ev = next_event(RDMA_CM_EVENT_ADDR_RESOLVED, "the UD id")))
		return;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, EVENT_WAIT_MS) ||
	    !(ev = next_event(RDMA_CM_EVENT_ROUTE_RESOLVED, "the UD id")))
		return;
	rdma_ack_cm_event(ev);
	check(rdma_connect(id, &param) == 0, "rdma_connect of the UD id: %s", strerror(errno));
	if (!answer(CM_ATTR_SIDR_REQ, req, "the UD id's connect"))
		return;
	reqid = rocemu_get_be32(&req[CM_SIDR_REQUEST_ID]);
	for (i = 0; i < sizeof(conn_attrs) / sizeof(conn_attrs[0]); i++) {
		conn_mad(mad, conn_attrs[i], 0x4242, reqid);
		rocemu_put_be24(&mad[CM_DREQ_REMOTE_QPN], param.qp_num);
		send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	}
	mad_init(mad, CM_ATTR_SIDR_REP);
	rocemu_put_be32(&mad[CM_SIDR_REQUEST_ID], reqid + 1);	/* another request */
	send_dropped(mad, CM_MAD_BYTES, ROCEMU_OP_UD_SEND_ONLY, CM_GSI_QKEY);
	all_dropped("connection MADs naming a SIDR request");

	mad_init(mad, CM_ATTR_SIDR_REP);
	rocemu_put_be64(&mad[MAD_OFF_TID], rocemu_get_be64(&req[MAD_OFF_TID]));
	rocemu_put_be32(&mad[CM_SIDR_REQUEST_ID], reqid);
	mad[CM_SIDR_REP_STATUS] = CM_SIDR_SUCCESS;
	rocemu_put_be24(&mad[CM_SIDR_REP_QPN], SIDR_QPN);
	rocemu_put_be64(&mad[CM_SIDR_REP_SERVICE_ID], rocemu_get_be64(&req[CM_SIDR_REQ_SERVICE_ID]));
	rocemu_put_be32(&mad[CM_SIDR_REP_QKEY], RDMA_UDP_QKEY);
	send_mad(mad);
	ev = next_event(RDMA_CM_EVENT_ESTABLISHED, "the SIDR REP");
	if (ev) {
		check(ev->param.ud.qp_num == SIDR_QPN && ev->param.ud.qkey == RDMA_UDP_QKEY,
		      "the SIDR REP resolves QPN 0x%06x Q_Key 0x%x", ev->param.ud.qp_num,
		      ev->param.ud.qkey);
		rdma_ack_cm_event(ev);
	}
}

int main(int argc, char **argv)
{
	if (argc != 5 || inet_pton(AF_INET, argv[1], &server_addr) != 1 ||
	    inet_pton(AF_INET, argv[2], &peer_addr) != 1) {
		fprintf(stderr, "usage: %s SERVER_ADDR PEER_ADDR ROCEMU PORT\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	cli_use(argv[3]);
	port = (uint16_t)atoi(argv[4]);
	ch = rdma_create_event_channel();
	if (!ch || !forge_open(&peer, peer_addr, ROCEMU_ROCEV2_PORT)) {
		check(false, "an event channel and the fake peer's socket");
		return checks_finish();
	}
	listen_on(RDMA_PS_TCP);
	listen_on(RDMA_PS_UDP);
	dropped_base = cli_stat(DEVICE, "rx_cm_dropped");
	malformed();
	refused();
	connection();
	sidr();
	cli_status_answers("after every forged MAD");
	return checks_finish();
}
