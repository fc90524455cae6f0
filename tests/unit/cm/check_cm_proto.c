/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The connection handshake (emulator/cm/cm_proto.c) on the fixture's
 * wire, past what check_ucma covers: a REQ, a REP and a DREQ resent on
 * each timeout and given up after the retries (UNREACHABLE or
 * DISCONNECTED, -ETIMEDOUT); a REP that stops the REQ's resends, the RTU
 * of the accept and again for a repeated REP; an MRA dropped; DREQ and
 * DREP both ways, a DREQ for another QP dropped, a stray DREQ answered,
 * both sides ending at once, timewait and its exit; a listener's backlog;
 * and SIDR for UD ids, both sides: the SIDR REQ, its REP's QPN and Q_Key,
 * refusals, a lost REP sent again. Resends are shortened through
 * ROCEMU_CM_TIMEOUT_MS and ROCEMU_CM_RETRIES and fire as the loop runs.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "emulator/cm/cm.h"
#include "emulator/cm/cm_msg.h"
#include "emulator/ctrl/client_life.h"
#include "net/roce/roce_opcode.h"
#include "tests/unit/fixture.h"

#define RESPONSE_ADDR 0x7f0012345000ull
#define UID 77
#define RESEND_MS "20"
#define RETRIES 2			/* each MAD goes 1 + RETRIES times */
#define RUN_STEP_NS (5 * 1000 * 1000ull)
#define RUN_STEPS_MAX 2000u		/* 10 s of loop at most: a deadline, not a pace */
#define OUR_QPN 0x000123u
#define PEER_COMM 0x0c0ffee0u		/* the peer's communication ID */
#define PEER_TID 0x1122334455667788ull
#define PEER_CM_QPN 0x000456u		/* the QP the peer connects */
#define PEER_PORT 40000u		/* the peer's port in its CMA headers */

static struct rocemu_client *cm;
static int cm_sock, events_fd;

static void setup(void)
{
	uint32_t file_id;
	int sv[2];

	/* Read when the emulator starts: every wait for an answer is 20 ms, resent twice. */
	ck_assert_int_eq(setenv("ROCEMU_CM_TIMEOUT_MS", RESEND_MS, 1), 0);
	ck_assert_int_eq(setenv("ROCEMU_CM_RETRIES", "2", 1), 0);
	fx_setup();
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	cm = rocemu_client_new(&fx.emu, sv[0], getpid(), getuid());
	ck_assert_ptr_nonnull(cm);
	cm_sock = sv[1];
	ck_assert_int_eq(rocemu_ucma_open(cm, &events_fd, &file_id), 0);
}

static void teardown(void)
{
	fx_teardown();
	close(cm_sock);
	close(events_fd);
}

static int ucma(const void *cmd, size_t size, struct rocemu_ucma_write_resp *resp)
{
	struct rocemu_ucma_write_req req = { .len = (uint32_t)size };

	memcpy(req.cmd, cmd, size);
	return rocemu_ucma_write(cm, &req, resp);
}

static uint32_t create_id(uint16_t ps, uint8_t qp_type)
{
	const struct ucma_abi_create_id cmd = { .cmd = UCMA_CMD_CREATE_ID, .uid = UID,
						.response = RESPONSE_ADDR, .ps = ps,
						.qp_type = qp_type };
	struct rocemu_ucma_write_resp resp;
	struct ucma_abi_create_id_resp out;

	ck_assert_int_eq(ucma(&cmd, sizeof(cmd), &resp), 0);
	memcpy(&out, resp.data, sizeof(out));
	return out.id;
}

static struct sockaddr_in6 v4(const char *ip, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = inet_addr(ip) };
	struct sockaddr_in6 slot;

	memset(&slot, 0, sizeof(slot));
	memcpy(&slot, &sin, sizeof(sin));
	return slot;
}

/* An event is queued: its byte is on the file's fd (the loop runs until then). */
static void wait_event(void)
{
	struct pollfd p = { .fd = events_fd, .events = POLLIN };
	unsigned int step;

	for (step = 0; step < RUN_STEPS_MAX; step++) {
		if (poll(&p, 1, 0) == 1)
			return;
		fx_run(RUN_STEP_NS);
	}
	ck_abort_msg("no rdma_cm event within 10 s of loop");
}

static struct ucma_abi_event_resp next_event(uint32_t id, uint32_t type, int32_t status)
{
	const struct ucma_abi_get_event cmd = { .cmd = UCMA_CMD_GET_EVENT,
						.response = RESPONSE_ADDR };
	struct rocemu_ucma_write_resp resp;
	struct ucma_abi_event_resp ev;
	char byte;

	wait_event();
	ck_assert_int_eq(read(events_fd, &byte, 1), 1);
	ck_assert_int_eq(ucma(&cmd, sizeof(cmd), &resp), 0);
	memcpy(&ev, resp.data, sizeof(ev));
	ck_assert_uint_eq(ev.event, type);
	ck_assert_int_eq((int32_t)ev.status, status);
	if (id)
		ck_assert_uint_eq(ev.id, id);
	return ev;
}

static void expect_no_event(void)
{
	const struct ucma_abi_get_event cmd = { .cmd = UCMA_CMD_GET_EVENT };
	struct rocemu_ucma_write_resp resp;

	ck_assert_int_eq(ucma(&cmd, sizeof(cmd), &resp), -EAGAIN);
}

/* An id of ps and qp_type resolved from the device to the peer's port 4791. */
static uint32_t id_routed(uint16_t ps, uint8_t qp_type)
{
	const struct ucma_abi_resolve_ip res = { .cmd = UCMA_CMD_RESOLVE_IP,
						 .src_addr = v4(FX_DEV_IP, 0),
						 .dst_addr = v4(FX_PEER_IP, 4791), .timeout_ms = 2000 };
	const struct ucma_abi_resolve_route route = { .cmd = UCMA_CMD_RESOLVE_ROUTE,
						      .timeout_ms = 2000 };
	struct ucma_abi_resolve_ip r = res;
	struct ucma_abi_resolve_route rr = route;
	struct rocemu_ucma_write_resp resp;
	uint32_t id = create_id(ps, qp_type);

	r.id = id;
	rr.id = id;
	ck_assert_int_eq(ucma(&r, sizeof(r), &resp), 0);
	next_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	ck_assert_int_eq(ucma(&rr, sizeof(rr), &resp), 0);
	next_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return id;
}

static const struct ucma_abi_conn_param rc_param = {
	.qp_num = OUR_QPN, .responder_resources = 4, .initiator_depth = 2,
	.retry_count = 7, .rnr_retry_count = 7, .valid = 1,
};

static int connect_id(uint32_t id)
{
	struct ucma_abi_connect cmd = { .cmd = UCMA_CMD_CONNECT, .id = id, .conn_param = rc_param };
	struct rocemu_ucma_write_resp resp;

	return ucma(&cmd, sizeof(cmd), &resp);
}

static int accept_id(uint32_t id, const struct ucma_abi_conn_param *param)
{
	struct ucma_abi_accept cmd = { .cmd = UCMA_CMD_ACCEPT, .uid = UID, .id = id };
	struct rocemu_ucma_write_resp resp;

	if (param)
		cmd.conn_param = *param;
	return ucma(&cmd, sizeof(cmd), &resp);
}

static int disconnect_id(uint32_t id)
{
	const struct ucma_abi_disconnect cmd = { .cmd = UCMA_CMD_DISCONNECT, .id = id };
	struct rocemu_ucma_write_resp resp;

	return ucma(&cmd, sizeof(cmd), &resp);
}

static void listen_on(uint32_t id, uint16_t port, int backlog)
{
	const struct ucma_abi_bind_ip bind = { .cmd = UCMA_CMD_BIND_IP, .id = id,
					       .addr = v4(FX_DEV_IP, port) };
	const struct ucma_abi_listen listen = { .cmd = UCMA_CMD_LISTEN, .id = id,
						.backlog = backlog };
	struct rocemu_ucma_write_resp resp;

	ck_assert_int_eq(ucma(&bind, sizeof(bind), &resp), 0);
	ck_assert_int_eq(ucma(&listen, sizeof(listen), &resp), 0);
}

/* The MAD of the wire's packet i: a UD SEND to QP1 with the CM's Q_Key, of attribute attr. */
static const uint8_t *wire_mad(unsigned int i, uint16_t attr)
{
	const uint8_t *bth = fx_wire_bth(i), *mad = bth + ROCEMU_BTH_BYTES + ROCEMU_DETH_BYTES;

	ck_assert_uint_eq(rocemu_bth_opcode(bth), ROCEMU_OP_UD_SEND_ONLY);
	ck_assert_uint_eq(rocemu_bth_destqp(bth), CM_GSI_QPN);
	ck_assert_uint_eq(rocemu_deth_qkey(bth + ROCEMU_BTH_BYTES), CM_GSI_QKEY);
	ck_assert_uint_eq(fx_wire_paylen(i), CM_MAD_BYTES);
	ck_assert(cm_mad_valid(mad, CM_MAD_BYTES));
	ck_assert_uint_eq(cm_mad_attr(mad), attr);
	return mad;
}

/* Packets [first, fx.nwire) are n copies of the same MAD of attribute attr. */
static void expect_copies(unsigned int first, unsigned int n, uint16_t attr)
{
	ck_assert_uint_eq(fx.nwire, first + n);
	for (unsigned int i = first + 1; i < first + n; i++)
		ck_assert_mem_eq(wire_mad(i, attr), wire_mad(first, attr), CM_MAD_BYTES);
}

static void peer_mad(const uint8_t *mad)
{
	const struct fx_hdrs h = { .qkey = CM_GSI_QKEY, .dest_qpn = CM_GSI_QPN };

	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY, &h, mad, CM_MAD_BYTES);
}

/* A connection MAD of the peer: its comm ID, ours (remote) and the transaction. */
static void peer_conn_mad(uint16_t attr, uint64_t tid, uint32_t ours, uint32_t remote_qpn)
{
	uint8_t mad[CM_MAD_BYTES];

	cm_mad_init(mad, attr, tid);
	rocemu_put_be32(&mad[CM_LOCAL_COMM_ID], PEER_COMM);
	rocemu_put_be32(&mad[CM_REMOTE_COMM_ID], ours);
	if (attr == CM_ATTR_DREQ)
		rocemu_put_be24(&mad[CM_DREQ_REMOTE_QPN], remote_qpn);
	peer_mad(mad);
}

/* The CMA header of a request from the peer's PEER_PORT to the device. */
static void cma_hdr(uint8_t *cma)
{
	uint32_t src = inet_addr(FX_PEER_IP), dst = inet_addr(FX_DEV_IP);
	uint16_t port = htons(PEER_PORT);

	cma[CMA_HDR_OFF_VERSION] = CMA_HDR_VERSION;
	cma[CMA_HDR_OFF_IP_VERSION] = CMA_HDR_IPV4;
	memcpy(&cma[CMA_HDR_OFF_PORT], &port, sizeof(port));
	memcpy(&cma[CMA_HDR_OFF_SRC_V4], &src, sizeof(src));
	memcpy(&cma[CMA_HDR_OFF_DST_V4], &dst, sizeof(dst));
}

/* The peer's REQ of comm ID comm for an RC listener at port. */
static void peer_req(uint32_t comm, uint16_t port)
{
	const struct cm_req req = {
		.local_comm_id = comm, .service_id = cma_service_id(RDMA_PS_TCP, port),
		.local_qpn = PEER_CM_QPN, .responder_resources = 2, .initiator_depth = 2,
		.remote_cm_response_timeout = 20, .local_cm_response_timeout = 20,
		.transport = CM_TRANSPORT_RC, .starting_psn = 0x77, .retry_count = 7,
		.rnr_retry_count = 7, .pkey = CM_PKEY_DEFAULT, .mtu = IBV_MTU_1024,
		.max_cm_retries = 15, .local_ack_timeout = 10,
	};
	uint8_t mad[CM_MAD_BYTES];

	cm_mad_init(mad, CM_ATTR_REQ, PEER_TID + comm);
	cm_req_put(mad, &req);
	cma_hdr(&mad[CM_REQ_PRIVATE_DATA]);
	peer_mad(mad);
}

/* Our REQ (packet i) answered by the peer's REP with a target ACK delay of 0 (timewait 256 ms). */
static void peer_rep_to(unsigned int i)
{
	const uint8_t *req_mad = wire_mad(i, CM_ATTR_REQ);
	struct cm_req req;
	struct cm_rep rep = { .local_comm_id = PEER_COMM, .qpn = PEER_CM_QPN, .starting_psn = 0x55,
			      .responder_resources = 2, .initiator_depth = 4,
			      .rnr_retry_count = 7 };
	uint8_t mad[CM_MAD_BYTES];

	cm_req_get(req_mad, &req);
	rep.remote_comm_id = req.local_comm_id;
	cm_mad_init(mad, CM_ATTR_REP, rocemu_get_be64(&req_mad[MAD_OFF_TID]));
	cm_rep_put(mad, &rep, false);
	memcpy(&mad[CM_REP_PRIVATE_DATA], "peer's words", 12);
	peer_mad(mad);
}

/* An RC id of ours connected to the peer and established (our RTU sent); its comm ID. */
static uint32_t established(uint32_t *id)
{
	struct ucma_abi_event_resp ev;
	struct cm_req req;

	*id = id_routed(RDMA_PS_TCP, IBV_QPT_RC);
	fx_wire_clear();
	ck_assert_int_eq(connect_id(*id), 0);
	cm_req_get(wire_mad(0, CM_ATTR_REQ), &req);
	peer_rep_to(0);
	ev = next_event(*id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	ck_assert_uint_eq(ev.param.conn.qp_num, PEER_CM_QPN);
	ck_assert_mem_eq(ev.param.conn.private_data, "peer's words", 12);
	ck_assert_int_eq(accept_id(*id, NULL), 0);
	ck_assert_uint_eq(fx.nwire, 2);
	ck_assert_uint_eq(rocemu_get_be32(&wire_mad(1, CM_ATTR_RTU)[CM_REMOTE_COMM_ID]),
			  PEER_COMM);
	fx_wire_clear();
	return req.local_comm_id;
}

START_TEST(test_req_resent_then_unreachable)
{
	uint32_t id = id_routed(RDMA_PS_TCP, IBV_QPT_RC);

	fx_wire_clear();
	ck_assert_int_eq(connect_id(id), 0);
	next_event(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
	expect_copies(0, 1 + RETRIES, CM_ATTR_REQ);
	/* Given up: nothing more goes out. */
	fx_run(100 * 1000 * 1000ull);
	ck_assert_uint_eq(fx.nwire, 1 + RETRIES);
}
END_TEST

/* An MRA asks for patience: dropped and counted, no event; the REQ's resends go on. */
START_TEST(test_mra_dropped)
{
	uint32_t id = id_routed(RDMA_PS_TCP, IBV_QPT_RC);
	struct cm_req req;

	fx_wire_clear();
	ck_assert_int_eq(connect_id(id), 0);
	cm_req_get(wire_mad(0, CM_ATTR_REQ), &req);
	peer_conn_mad(CM_ATTR_MRA, 1, req.local_comm_id, 0);
	ck_assert_uint_eq(fx.dev->counters.rx_cm_dropped, 1);
	expect_no_event();
	next_event(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
}
END_TEST

/* The REP stops the REQ's resends; the RTU of the accept, sent again for the REP repeated. */
START_TEST(test_rep_stops_resends_rtu_again)
{
	uint32_t id, comm = established(&id);
	const uint8_t *rtu;

	fx_run(100 * 1000 * 1000ull);
	ck_assert_uint_eq(fx.nwire, 0);
	/* Our RTU lost: the peer's REP again. */
	peer_conn_mad(CM_ATTR_REP, 3, comm, 0);
	ck_assert_uint_eq(fx.nwire, 1);
	rtu = wire_mad(0, CM_ATTR_RTU);
	ck_assert_uint_eq(rocemu_get_be32(&rtu[CM_LOCAL_COMM_ID]), comm);
	ck_assert_uint_eq(rocemu_get_be32(&rtu[CM_REMOTE_COMM_ID]), PEER_COMM);
	/* Accepting again is out of state. */
	ck_assert_int_eq(accept_id(id, NULL), -EINVAL);
	expect_no_event();
}
END_TEST

/* Our DREQ names the peer's QP; its DREP: DISCONNECTED, then timewait and its exit. */
START_TEST(test_disconnect_drep_timewait)
{
	uint32_t id, comm = established(&id);
	const uint8_t *dreq;

	ck_assert_int_eq(disconnect_id(id), 0);
	ck_assert_uint_eq(fx.nwire, 1);
	dreq = wire_mad(0, CM_ATTR_DREQ);
	ck_assert_uint_eq(rocemu_get_be24(&dreq[CM_DREQ_REMOTE_QPN]), PEER_CM_QPN);
	ck_assert_uint_eq(rocemu_get_be32(&dreq[CM_LOCAL_COMM_ID]), comm);
	ck_assert_uint_eq(rocemu_get_be32(&dreq[CM_REMOTE_COMM_ID]), PEER_COMM);
	peer_conn_mad(CM_ATTR_DREP, rocemu_get_be64(&dreq[MAD_OFF_TID]), comm, 0);
	next_event(id, RDMA_CM_EVENT_DISCONNECTED, 0);
	ck_assert_int_eq(disconnect_id(id), -EINVAL);
	next_event(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
	/* The DREP ended the DREQ's resends. */
	ck_assert_uint_eq(fx.nwire, 1);
}
END_TEST

/* A DREQ never answered: resent, then DISCONNECTED with -ETIMEDOUT, and timewait all the same. */
START_TEST(test_dreq_unanswered)
{
	uint32_t id;

	established(&id);
	ck_assert_int_eq(disconnect_id(id), 0);
	next_event(id, RDMA_CM_EVENT_DISCONNECTED, -ETIMEDOUT);
	expect_copies(0, 1 + RETRIES, CM_ATTR_DREQ);
	next_event(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
}
END_TEST

/*
 * The peer's DREQ: one for another QP is dropped; the right one gives
 * DISCONNECTED, our DREP echoes its transaction, and is sent again for
 * the DREQ repeated while in timewait.
 */
START_TEST(test_peer_dreq)
{
	uint32_t id, comm = established(&id);
	const uint8_t *drep;

	peer_conn_mad(CM_ATTR_DREQ, 0xd1, comm, OUR_QPN + 1);
	ck_assert_uint_eq(fx.dev->counters.rx_cm_dropped, 1);
	expect_no_event();
	peer_conn_mad(CM_ATTR_DREQ, 0xd2, comm, OUR_QPN);
	next_event(id, RDMA_CM_EVENT_DISCONNECTED, 0);
	ck_assert_uint_eq(fx.nwire, 0);
	ck_assert_int_eq(disconnect_id(id), 0);
	ck_assert_uint_eq(fx.nwire, 1);
	drep = wire_mad(0, CM_ATTR_DREP);
	ck_assert_uint_eq(rocemu_get_be64(&drep[MAD_OFF_TID]), 0xd2);
	ck_assert_uint_eq(rocemu_get_be32(&drep[CM_REMOTE_COMM_ID]), PEER_COMM);
	peer_conn_mad(CM_ATTR_DREQ, 0xd2, comm, OUR_QPN);
	expect_copies(0, 2, CM_ATTR_DREP);
	next_event(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
}
END_TEST

/* A DREQ naming no connection of ours is answered all the same (cm_issue_drep), comm IDs swapped. */
START_TEST(test_stray_dreq_answered)
{
	const uint8_t *drep;

	peer_conn_mad(CM_ATTR_DREQ, 0xabc, 0xdead, OUR_QPN);
	ck_assert_uint_eq(fx.nwire, 1);
	drep = wire_mad(0, CM_ATTR_DREP);
	ck_assert_uint_eq(rocemu_get_be64(&drep[MAD_OFF_TID]), 0xabc);
	ck_assert_uint_eq(rocemu_get_be32(&drep[CM_LOCAL_COMM_ID]), 0xdead);
	ck_assert_uint_eq(rocemu_get_be32(&drep[CM_REMOTE_COMM_ID]), PEER_COMM);
	ck_assert_uint_eq(fx.dev->counters.rx_cm_dropped, 0);
	expect_no_event();
}
END_TEST

/* Both sides end it at once: each answers the other's DREQ, the peer's DREP ends ours. */
START_TEST(test_both_disconnect_at_once)
{
	uint32_t id, comm = established(&id);

	ck_assert_int_eq(disconnect_id(id), 0);
	peer_conn_mad(CM_ATTR_DREQ, 0xd3, comm, OUR_QPN);
	ck_assert_uint_eq(fx.nwire, 2);
	ck_assert_uint_eq(rocemu_get_be64(&wire_mad(1, CM_ATTR_DREP)[MAD_OFF_TID]), 0xd3);
	expect_no_event();
	peer_conn_mad(CM_ATTR_DREP, 1, comm, 0);
	next_event(id, RDMA_CM_EVENT_DISCONNECTED, 0);
	next_event(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
}
END_TEST

/* The passive side's REP never answered by an RTU: resent, then UNREACHABLE for the new id. */
START_TEST(test_rep_resent_then_unreachable)
{
	const struct ucma_abi_conn_param param = { .qp_num = OUR_QPN, .responder_resources = 2,
						   .initiator_depth = 2, .valid = 1 };
	uint32_t listener = create_id(RDMA_PS_TCP, IBV_QPT_RC);
	struct ucma_abi_event_resp ev;
	struct cm_rep rep;

	listen_on(listener, 4791, 4);
	fx_wire_clear();
	peer_req(PEER_COMM, 4791);
	ev = next_event(0, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	ck_assert_uint_ne(ev.id, listener);
	ck_assert_uint_eq(ev.param.conn.qp_num, PEER_CM_QPN);
	ck_assert_int_eq(accept_id(ev.id, &param), 0);
	cm_rep_get(wire_mad(0, CM_ATTR_REP), &rep, false);
	ck_assert_uint_eq(rep.remote_comm_id, PEER_COMM);
	ck_assert_uint_eq(rep.qpn, OUR_QPN);
	ck_assert_uint_eq(rocemu_get_be64(&wire_mad(0, CM_ATTR_REP)[MAD_OFF_TID]),
			  PEER_TID + PEER_COMM);
	next_event(ev.id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
	expect_copies(0, 1 + RETRIES, CM_ATTR_REP);
}
END_TEST

/*
 * A listener with a backlog of 1: a second REQ while the first is not yet
 * reported is refused; once reported, there is room again.
 */
START_TEST(test_backlog_full_rejects)
{
	uint32_t listener = create_id(RDMA_PS_TCP, IBV_QPT_RC), first;
	const uint8_t *rej;

	listen_on(listener, 4791, 1);
	fx_wire_clear();
	peer_req(PEER_COMM, 4791);
	peer_req(PEER_COMM + 1, 4791);
	ck_assert_uint_eq(fx.nwire, 1);
	rej = wire_mad(0, CM_ATTR_REJ);
	ck_assert_uint_eq(rocemu_get_be32(&rej[CM_REMOTE_COMM_ID]), PEER_COMM + 1);
	ck_assert_uint_eq(rocemu_get_be16(&rej[CM_REJ_REASON]), CM_REJ_CONSUMER_DEFINED);
	first = next_event(0, RDMA_CM_EVENT_CONNECT_REQUEST, 0).id;
	expect_no_event();
	/* Reported, it is the application's: the backlog has room for the next. */
	peer_req(PEER_COMM + 2, 4791);
	ck_assert_uint_ne(next_event(0, RDMA_CM_EVENT_CONNECT_REQUEST, 0).id, first);
	ck_assert_uint_eq(fx.nwire, 1);
}
END_TEST

/* ---- SIDR ---- */

static int connect_ud(uint32_t id)
{
	struct ucma_abi_connect cmd = { .cmd = UCMA_CMD_CONNECT, .id = id,
					.conn_param = { .qp_num = OUR_QPN, .valid = 1,
							.private_data_len = 4 } };
	struct rocemu_ucma_write_resp resp;

	memcpy(cmd.conn_param.private_data, "sidr", 4);
	return ucma(&cmd, sizeof(cmd), &resp);
}

/* The peer's SIDR REP to our SIDR REQ (packet i) with status, QPN and Q_Key. */
static void peer_sidr_rep(unsigned int i, uint8_t status, uint32_t qkey)
{
	const uint8_t *req = wire_mad(i, CM_ATTR_SIDR_REQ);
	uint8_t mad[CM_MAD_BYTES];

	cm_mad_init(mad, CM_ATTR_SIDR_REP, rocemu_get_be64(&req[MAD_OFF_TID]));
	rocemu_put_be32(&mad[CM_SIDR_REQUEST_ID], rocemu_get_be32(&req[CM_SIDR_REQUEST_ID]));
	mad[CM_SIDR_REP_STATUS] = status;
	rocemu_put_be24(&mad[CM_SIDR_REP_QPN], PEER_CM_QPN);
	rocemu_put_be32(&mad[CM_SIDR_REP_QKEY], qkey);
	peer_mad(mad);
}

/* Our SIDR REQ: the UDP port space's service ID, the CMA header, our private data; its REP. */
START_TEST(test_sidr_resolves)
{
	uint32_t id = id_routed(RDMA_PS_UDP, IBV_QPT_UD), peer = inet_addr(FX_PEER_IP);
	struct ucma_abi_event_resp ev;
	const uint8_t *req;

	fx_wire_clear();
	ck_assert_int_eq(connect_ud(id), 0);
	req = wire_mad(0, CM_ATTR_SIDR_REQ);
	ck_assert_uint_eq(rocemu_get_be64(&req[CM_SIDR_REQ_SERVICE_ID]),
			  cma_service_id(RDMA_PS_UDP, 4791));
	ck_assert_uint_eq(req[CM_SIDR_REQ_PRIVATE_DATA + CMA_HDR_OFF_IP_VERSION], CMA_HDR_IPV4);
	ck_assert_mem_eq(&req[CM_SIDR_REQ_PRIVATE_DATA + CMA_HDR_OFF_DST_V4], &peer, 4);
	ck_assert_mem_eq(&req[CM_SIDR_REQ_PRIVATE_DATA + CMA_HDR_BYTES], "sidr", 4);
	peer_sidr_rep(0, CM_SIDR_SUCCESS, RDMA_UDP_QKEY);
	ev = next_event(id, RDMA_CM_EVENT_ESTABLISHED, 0);
	ck_assert_uint_eq(ev.param.ud.qp_num, PEER_CM_QPN);
	ck_assert_uint_eq(ev.param.ud.qkey, RDMA_UDP_QKEY);
	/* Answered: no resend, and the same REP again is stale. */
	fx_run(100 * 1000 * 1000ull);
	ck_assert_uint_eq(fx.nwire, 1);
	peer_sidr_rep(0, CM_SIDR_SUCCESS, RDMA_UDP_QKEY);
	ck_assert_uint_eq(fx.dev->counters.rx_cm_dropped, 1);
	expect_no_event();
}
END_TEST

/* Refused: UNREACHABLE with the SIDR status; no Q_Key: ADDR_ERROR, EINVAL. */
START_TEST(test_sidr_refusals)
{
	uint32_t a = id_routed(RDMA_PS_UDP, IBV_QPT_UD), b = id_routed(RDMA_PS_UDP, IBV_QPT_UD);

	fx_wire_clear();
	ck_assert_int_eq(connect_ud(a), 0);
	ck_assert_int_eq(connect_ud(b), 0);
	peer_sidr_rep(0, CM_SIDR_REJECT, 0);
	next_event(a, RDMA_CM_EVENT_UNREACHABLE, CM_SIDR_REJECT);
	peer_sidr_rep(1, CM_SIDR_SUCCESS, 0);
	next_event(b, RDMA_CM_EVENT_ADDR_ERROR, -EINVAL);
}
END_TEST

START_TEST(test_sidr_unanswered)
{
	uint32_t id = id_routed(RDMA_PS_UDP, IBV_QPT_UD);

	fx_wire_clear();
	ck_assert_int_eq(connect_ud(id), 0);
	next_event(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
	expect_copies(0, 1 + RETRIES, CM_ATTR_SIDR_REQ);
}
END_TEST

/* The peer's SIDR REQ for port, request ID reqid. */
static void peer_sidr_req(uint32_t reqid, uint16_t port)
{
	uint8_t mad[CM_MAD_BYTES];

	cm_mad_init(mad, CM_ATTR_SIDR_REQ, PEER_TID);
	rocemu_put_be32(&mad[CM_SIDR_REQUEST_ID], reqid);
	rocemu_put_be16(&mad[CM_SIDR_REQ_PKEY], CM_PKEY_DEFAULT);
	rocemu_put_be64(&mad[CM_SIDR_REQ_SERVICE_ID], cma_service_id(RDMA_PS_UDP, port));
	cma_hdr(&mad[CM_SIDR_REQ_PRIVATE_DATA]);
	memcpy(&mad[CM_SIDR_REQ_PRIVATE_DATA + CMA_HDR_BYTES], "hello", 5);
	peer_mad(mad);
}

/*
 * A UD listener: the peer's SIDR REQ is a CONNECT_REQUEST, the accept a
 * SIDR REP with our QPN and the UDP Q_Key, sent again for the SIDR REQ
 * repeated; a SIDR REQ for a port no one listens on is unsupported.
 */
START_TEST(test_sidr_passive)
{
	const struct ucma_abi_conn_param param = { .qp_num = OUR_QPN, .valid = 1 };
	uint32_t listener = create_id(RDMA_PS_UDP, IBV_QPT_UD);
	struct ucma_abi_event_resp ev;
	const uint8_t *rep;

	listen_on(listener, 4791, 4);
	fx_wire_clear();
	peer_sidr_req(0x5151, 4791);
	ev = next_event(0, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	ck_assert_uint_ne(ev.id, listener);
	ck_assert_mem_eq(ev.param.ud.private_data, "hello", 5);
	ck_assert_uint_eq(fx.nwire, 0);
	ck_assert_int_eq(accept_id(ev.id, &param), 0);
	ck_assert_uint_eq(fx.nwire, 1);
	rep = wire_mad(0, CM_ATTR_SIDR_REP);
	ck_assert_uint_eq(rep[CM_SIDR_REP_STATUS], CM_SIDR_SUCCESS);
	ck_assert_uint_eq(rocemu_get_be32(&rep[CM_SIDR_REQUEST_ID]), 0x5151);
	ck_assert_uint_eq(rocemu_get_be24(&rep[CM_SIDR_REP_QPN]), OUR_QPN);
	ck_assert_uint_eq(rocemu_get_be32(&rep[CM_SIDR_REP_QKEY]), RDMA_UDP_QKEY);
	ck_assert_uint_eq(rocemu_get_be64(&rep[MAD_OFF_TID]), PEER_TID);
	peer_sidr_req(0x5151, 4791);
	expect_copies(0, 2, CM_ATTR_SIDR_REP);
	expect_no_event();
	peer_sidr_req(0x5252, 4792);
	ck_assert_uint_eq(fx.nwire, 3);
	rep = wire_mad(2, CM_ATTR_SIDR_REP);
	ck_assert_uint_eq(rep[CM_SIDR_REP_STATUS], CM_SIDR_UNSUPPORTED);
	ck_assert_uint_eq(rocemu_get_be32(&rep[CM_SIDR_REQUEST_ID]), 0x5252);
}
END_TEST

/* A SIDR REQ the consumer rejects: a SIDR REP of status REJECT, no QPN. */
START_TEST(test_sidr_passive_reject)
{
	struct ucma_abi_reject rej = { .cmd = UCMA_CMD_REJECT };
	uint32_t listener = create_id(RDMA_PS_UDP, IBV_QPT_UD);
	struct rocemu_ucma_write_resp resp;
	const uint8_t *rep;

	listen_on(listener, 4791, 4);
	fx_wire_clear();
	peer_sidr_req(0x5353, 4791);
	rej.id = next_event(0, RDMA_CM_EVENT_CONNECT_REQUEST, 0).id;
	ck_assert_int_eq(ucma(&rej, sizeof(rej), &resp), 0);
	ck_assert_uint_eq(fx.nwire, 1);
	rep = wire_mad(0, CM_ATTR_SIDR_REP);
	ck_assert_uint_eq(rep[CM_SIDR_REP_STATUS], CM_SIDR_REJECT);
	ck_assert_uint_eq(rocemu_get_be24(&rep[CM_SIDR_REP_QPN]), 0);
	ck_assert_uint_eq(rocemu_get_be32(&rep[CM_SIDR_REP_QKEY]), 0);
}
END_TEST

static Suite *cm_proto_suite(void)
{
	Suite *s = suite_create("cm_proto");
	TCase *conn = tcase_create("connection"), *sidr = tcase_create("sidr");

	tcase_add_checked_fixture(conn, setup, teardown);
	tcase_set_timeout(conn, 30);
	tcase_add_test(conn, test_req_resent_then_unreachable);
	tcase_add_test(conn, test_mra_dropped);
	tcase_add_test(conn, test_rep_stops_resends_rtu_again);
	tcase_add_test(conn, test_disconnect_drep_timewait);
	tcase_add_test(conn, test_dreq_unanswered);
	tcase_add_test(conn, test_peer_dreq);
	tcase_add_test(conn, test_stray_dreq_answered);
	tcase_add_test(conn, test_both_disconnect_at_once);
	tcase_add_test(conn, test_rep_resent_then_unreachable);
	tcase_add_test(conn, test_backlog_full_rejects);
	suite_add_tcase(s, conn);
	tcase_add_checked_fixture(sidr, setup, teardown);
	tcase_set_timeout(sidr, 30);
	tcase_add_test(sidr, test_sidr_resolves);
	tcase_add_test(sidr, test_sidr_refusals);
	tcase_add_test(sidr, test_sidr_unanswered);
	tcase_add_test(sidr, test_sidr_passive);
	tcase_add_test(sidr, test_sidr_passive_reject);
	suite_add_tcase(s, sidr);
	return s;
}

int main(void)
{
	return fx_suite_run(cm_proto_suite());
}
