/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The rdma_cm file (emulator/cm/ucma.c) and its addresses (cm_addr.c)
 * through the two functions the control ops call, rocemu_ucma_open and
 * rocemu_ucma_write, with the commands librdmacm writes: who may open the
 * file, a command's framing, ids made and destroyed per port space, binds
 * (ports taken, addresses of no device or of no host, AF_IB refused),
 * address and route resolution with their events in order, and another
 * file's ids unknown, each with the errno the kernel's ucma gives. Then
 * the handshake (cm_proto.c) on the fixture's wire: the REQ a CONNECT
 * sends, as the peer reads it, and the peer's REJ or a stray MAD; on the
 * passive side a REQ to a listener, the REP of the accept (sent again for
 * a repeated REQ), the RTU that establishes it, and a REQ for no listener.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "emulator/cm/cm.h"
#include "emulator/cm/cm_msg.h"
#include "net/roce/roce_opcode.h"
#include "emulator/ctrl/client_life.h"
#include "tests/unit/fixture.h"

#define RESPONSE_ADDR 0x7f0012345000ull	/* where the application wants the answer */
#define NO_HOST_IP "198.51.100.7"	/* TEST-NET-2: an address of no host here */

static struct rocemu_client *cm;	/* a client that opened the rdma_cm file */
static int cm_sock, events_fd;

/* A client with no device of its own, as librdmacm's connection to the daemon is. */
static struct rocemu_client *client_plain(int *peer_sock)
{
	struct rocemu_client *c;
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	c = rocemu_client_new(&fx.emu, sv[0], getpid(), getuid());
	ck_assert_ptr_nonnull(c);
	*peer_sock = sv[1];
	return c;
}

static void setup(void)
{
	uint32_t file_id;

	fx_setup();
	cm = client_plain(&cm_sock);
	ck_assert_int_eq(rocemu_ucma_open(cm, &events_fd, &file_id), 0);
}

static void teardown(void)
{
	fx_teardown();
	close(cm_sock);
	close(events_fd);
}

/* Write command cmd of size bytes on c's file; resp holds the answer. */
static int ucma(struct rocemu_client *c, const void *cmd, size_t size,
		struct rocemu_ucma_write_resp *resp)
{
	struct rocemu_ucma_write_req req = { .len = (uint32_t)size };

	memcpy(req.cmd, cmd, size);
	return rocemu_ucma_write(c, &req, resp);
}

static int create_id(struct rocemu_client *c, uint16_t ps, uint32_t *id)
{
	const struct ucma_abi_create_id cmd = { .cmd = UCMA_CMD_CREATE_ID, .uid = 77,
						.response = RESPONSE_ADDR, .ps = ps,
						.qp_type = IBV_QPT_RC };
	struct rocemu_ucma_write_resp resp;
	struct ucma_abi_create_id_resp out;
	int err = ucma(c, &cmd, sizeof(cmd), &resp);

	if (err)
		return err;
	ck_assert_uint_eq(resp.response, RESPONSE_ADDR);
	ck_assert_uint_eq(resp.len, sizeof(out));
	memcpy(&out, resp.data, sizeof(out));
	*id = out.id;
	return 0;
}

static int destroy_id(struct rocemu_client *c, uint32_t id)
{
	const struct ucma_abi_destroy_id cmd = { .cmd = UCMA_CMD_DESTROY_ID, .id = id,
						 .response = RESPONSE_ADDR };
	struct rocemu_ucma_write_resp resp;

	return ucma(c, &cmd, sizeof(cmd), &resp);
}

static struct sockaddr_in6 v4(const char *ip, uint16_t port)
{
	struct sockaddr_in6 slot;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = inet_addr(ip) };

	memset(&slot, 0, sizeof(slot));
	memcpy(&slot, &sin, sizeof(sin));
	return slot;
}

static int bind_ip(uint32_t id, struct sockaddr_in6 addr)
{
	const struct ucma_abi_bind_ip cmd = { .cmd = UCMA_CMD_BIND_IP, .id = id, .addr = addr };
	struct rocemu_ucma_write_resp resp;

	return ucma(cm, &cmd, sizeof(cmd), &resp);
}

static struct ucma_abi_query_route_resp query_route(uint32_t id)
{
	const struct ucma_abi_query cmd = { .cmd = UCMA_CMD_QUERY_ROUTE, .id = id,
					    .response = RESPONSE_ADDR };
	struct rocemu_ucma_write_resp resp;
	struct ucma_abi_query_route_resp out;

	ck_assert_int_eq(ucma(cm, &cmd, sizeof(cmd), &resp), 0);
	ck_assert_uint_eq(resp.len, sizeof(out));
	memcpy(&out, resp.data, sizeof(out));
	return out;
}

/* The next event of cm's file, checked of its type and status. */
static struct ucma_abi_event_resp next_event(uint32_t type, int32_t status)
{
	const struct ucma_abi_get_event cmd = { .cmd = UCMA_CMD_GET_EVENT,
						.response = RESPONSE_ADDR };
	struct rocemu_ucma_write_resp resp;
	struct ucma_abi_event_resp ev;
	char byte;

	ck_assert_int_eq(read(events_fd, &byte, 1), 1);
	ck_assert_int_eq(ucma(cm, &cmd, sizeof(cmd), &resp), 0);
	memcpy(&ev, resp.data, sizeof(ev));
	ck_assert_uint_eq(ev.uid, 77);
	ck_assert_uint_eq(ev.event, type);
	ck_assert_int_eq((int32_t)ev.status, status);
	return ev;
}

static void expect_event(uint32_t id, uint32_t type, int32_t status)
{
	ck_assert_uint_eq(next_event(type, status).id, id);
}

START_TEST(test_open)
{
	struct rocemu_ucma_write_resp resp;
	const struct ucma_abi_get_event cmd = { .cmd = UCMA_CMD_GET_EVENT };
	uint32_t file_id;
	int fd;

	/* One file per connection, and not on a connection that opened a device. */
	ck_assert_int_eq(rocemu_ucma_open(cm, &fd, &file_id), -EBUSY);
	ck_assert_int_eq(rocemu_ucma_open(fx.client, &fd, &file_id), -EBUSY);
	ck_assert_int_eq(ucma(fx.client, &cmd, sizeof(cmd), &resp), -EINVAL);
	/* Nothing queued: the reader waits on. */
	ck_assert_int_eq(ucma(cm, &cmd, sizeof(cmd), &resp), -EAGAIN);
}
END_TEST

START_TEST(test_framing)
{
	struct ucma_abi_create_id create = { .cmd = UCMA_CMD_CREATE_ID, .ps = RDMA_PS_TCP };
	const struct ucma_abi_cmd_hdr unknown = { .cmd = 200 }, af_ib = { .cmd = UCMA_CMD_BIND };
	struct rocemu_ucma_write_resp resp;

	ck_assert_int_eq(ucma(cm, &create, sizeof(struct ucma_abi_cmd_hdr) - 1, &resp), -EINVAL);
	ck_assert_int_eq(ucma(cm, &create, sizeof(create) - 1, &resp), -EINVAL);
	ck_assert_int_eq(ucma(cm, &unknown, sizeof(unknown), &resp), -ENOSYS);
	/* AF_IB addresses: librdmacm falls back to the IP commands. */
	ck_assert_int_eq(ucma(cm, &af_ib, sizeof(af_ib), &resp), -EAFNOSUPPORT);
}
END_TEST

START_TEST(test_ids)
{
	struct rocemu_client *other = client_plain(&(int){ 0 });
	uint32_t tcp, udp, theirs, file_id;
	int fd;

	ck_assert_int_eq(rocemu_ucma_open(other, &fd, &file_id), 0);
	ck_assert_int_eq(create_id(cm, 0x0999, &tcp), -EINVAL);
	ck_assert_int_eq(create_id(cm, RDMA_PS_TCP, &tcp), 0);
	ck_assert_int_eq(create_id(cm, RDMA_PS_UDP, &udp), 0);
	ck_assert_int_eq(create_id(other, RDMA_PS_TCP, &theirs), 0);
	ck_assert_uint_ne(tcp, udp);
	/* Another file's id is unknown here. */
	ck_assert_int_eq(destroy_id(cm, theirs), -ENOENT);
	ck_assert_int_eq(bind_ip(theirs, v4(FX_DEV_IP, 0)), -ENOENT);
	ck_assert_int_eq(destroy_id(cm, tcp), 0);
	ck_assert_int_eq(destroy_id(cm, tcp), -ENOENT);
	ck_assert_int_eq(destroy_id(cm, udp), 0);
	ck_assert_int_eq(destroy_id(other, theirs), 0);
	close(fd);
}
END_TEST

START_TEST(test_bind)
{
	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6 };
	struct ucma_abi_query_route_resp route;
	struct sockaddr_in src;
	uint32_t a, b, udp;

	ck_assert_int_eq(create_id(cm, RDMA_PS_TCP, &a), 0);
	ck_assert_int_eq(create_id(cm, RDMA_PS_TCP, &b), 0);
	ck_assert_int_eq(create_id(cm, RDMA_PS_UDP, &udp), 0);
	ck_assert_int_eq(bind_ip(a, v6), -EAFNOSUPPORT);
	/* rdma_translate_ip: no host has it. */
	ck_assert_int_eq(bind_ip(a, v4(NO_HOST_IP, 0)), -EADDRNOTAVAIL);
	ck_assert_int_eq(bind_ip(a, v4(FX_DEV_IP, 0)), 0);
	route = query_route(a);
	memcpy(&src, &route.src_addr, sizeof(src));
	ck_assert_uint_eq(src.sin_addr.s_addr, inet_addr(FX_DEV_IP));
	ck_assert_uint_ne(src.sin_port, 0);	/* an ephemeral port */
	ck_assert_uint_eq(route.num_paths, 0);	/* bound, not resolved */
	/* Bound once; its port is taken in its port space, free in another. */
	ck_assert_int_eq(bind_ip(a, v4(FX_DEV_IP, 0)), -EINVAL);
	ck_assert_int_eq(bind_ip(b, v4(FX_DEV_IP, ntohs(src.sin_port))), -EADDRINUSE);
	ck_assert_int_eq(bind_ip(udp, v4(FX_DEV_IP, ntohs(src.sin_port))), 0);
	/* The port is free again once its id is gone. */
	ck_assert_int_eq(destroy_id(cm, a), 0);
	ck_assert_int_eq(bind_ip(b, v4(FX_DEV_IP, ntohs(src.sin_port))), 0);
}
END_TEST

static int resolve_ip(uint32_t id, const char *dst)
{
	const struct ucma_abi_resolve_ip cmd = { .cmd = UCMA_CMD_RESOLVE_IP, .id = id,
						 .src_addr = v4(FX_DEV_IP, 0),
						 .dst_addr = v4(dst, 4791), .timeout_ms = 2000 };
	struct rocemu_ucma_write_resp resp;

	return ucma(cm, &cmd, sizeof(cmd), &resp);
}

static int resolve_route(uint32_t id)
{
	const struct ucma_abi_resolve_route cmd = { .cmd = UCMA_CMD_RESOLVE_ROUTE, .id = id,
						    .timeout_ms = 2000 };
	struct rocemu_ucma_write_resp resp;

	return ucma(cm, &cmd, sizeof(cmd), &resp);
}

/* rdma_resolve_addr, then rdma_resolve_route, each answered by its event; out of order, EINVAL. */
START_TEST(test_resolve)
{
	struct ucma_abi_query_route_resp route;
	uint32_t id, bad;

	ck_assert_int_eq(create_id(cm, RDMA_PS_TCP, &id), 0);
	ck_assert_int_eq(create_id(cm, RDMA_PS_TCP, &bad), 0);
	ck_assert_int_eq(resolve_route(id), -EINVAL);
	/* A failed resolution is an event, not an error of the command. */
	ck_assert_int_eq(resolve_ip(bad, "0.0.0.0"), 0);
	expect_event(bad, RDMA_CM_EVENT_ADDR_ERROR, -EADDRNOTAVAIL);
	ck_assert_int_eq(resolve_route(bad), -EINVAL);
	/* The device's own address: its own source (cma_resolve_loopback). */
	ck_assert_int_eq(resolve_ip(id, FX_DEV_IP), 0);
	expect_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	ck_assert_int_eq(resolve_ip(id, FX_DEV_IP), -EINVAL);
	ck_assert_int_eq(resolve_route(id), 0);
	expect_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	route = query_route(id);
	ck_assert_uint_eq(route.num_paths, 1);
	ck_assert_uint_eq(route.port_num, ROCEMU_PORT_NUM);
	/* RoCEv2 GIDs: ::ffff:a.b.c.d of each end. */
	ck_assert_uint_eq(route.ib_route[0].sgid[10], 0xff);
	ck_assert_uint_eq(route.ib_route[0].sgid[11], 0xff);
	ck_assert_mem_eq(&route.ib_route[0].dgid[12], &(uint32_t){ inet_addr(FX_DEV_IP) }, 4);
	ck_assert_int_eq(resolve_route(id), -EINVAL);
}
END_TEST

/* DESTROY_ID answers how many events of the id were reported; its queued ones go with it. */
START_TEST(test_destroy_reports_events)
{
	const struct ucma_abi_destroy_id cmd = { .cmd = UCMA_CMD_DESTROY_ID,
						 .response = RESPONSE_ADDR };
	const struct ucma_abi_get_event get = { .cmd = UCMA_CMD_GET_EVENT };
	struct ucma_abi_destroy_id destroy = cmd;
	struct ucma_abi_destroy_id_resp out;
	struct rocemu_ucma_write_resp resp;
	uint32_t id;

	ck_assert_int_eq(create_id(cm, RDMA_PS_TCP, &id), 0);
	ck_assert_int_eq(resolve_ip(id, FX_DEV_IP), 0);
	expect_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	ck_assert_int_eq(resolve_route(id), 0);
	destroy.id = id;
	ck_assert_int_eq(ucma(cm, &destroy, sizeof(destroy), &resp), 0);
	memcpy(&out, resp.data, sizeof(out));
	ck_assert_uint_eq(out.events_reported, 1);
	ck_assert_int_eq(ucma(cm, &get, sizeof(get), &resp), -EAGAIN);
}
END_TEST

/* An id of cm's file resolved from the device to the peer, ready for CONNECT. */
static uint32_t id_routed(void)
{
	uint32_t id;

	ck_assert_int_eq(create_id(cm, RDMA_PS_TCP, &id), 0);
	ck_assert_int_eq(resolve_ip(id, FX_PEER_IP), 0);
	expect_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	ck_assert_int_eq(resolve_route(id), 0);
	expect_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return id;
}

static int connect_id(uint32_t id, const struct ucma_abi_conn_param *param)
{
	struct ucma_abi_connect cmd = { .cmd = UCMA_CMD_CONNECT, .id = id,
					.conn_param = *param };
	struct rocemu_ucma_write_resp resp;

	return ucma(cm, &cmd, sizeof(cmd), &resp);
}

/* The MAD of the wire's packet i: a UD SEND to QP1 with the CM's Q_Key. */
static const uint8_t *wire_mad(unsigned int i)
{
	const uint8_t *bth = fx_wire_bth(i);

	ck_assert_uint_eq(rocemu_bth_opcode(bth), ROCEMU_OP_UD_SEND_ONLY);
	ck_assert_uint_eq(rocemu_bth_destqp(bth), CM_GSI_QPN);
	ck_assert_uint_eq(rocemu_deth_qkey(bth + ROCEMU_BTH_BYTES), CM_GSI_QKEY);
	ck_assert_uint_eq(fx_wire_paylen(i), CM_MAD_BYTES);
	ck_assert(cm_mad_valid(bth + ROCEMU_BTH_BYTES + ROCEMU_DETH_BYTES, CM_MAD_BYTES));
	return bth + ROCEMU_BTH_BYTES + ROCEMU_DETH_BYTES;
}

/* The peer's MAD to the device's QP1. */
static void peer_mad(const uint8_t *mad)
{
	const struct fx_hdrs h = { .qkey = CM_GSI_QKEY, .dest_qpn = CM_GSI_QPN };

	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY, &h, mad, CM_MAD_BYTES);
}

static const struct ucma_abi_conn_param rc_param = {
	.qp_num = 0x000123, .responder_resources = 4, .initiator_depth = 2,
	.retry_count = 9, .rnr_retry_count = 6, .valid = 1,
};

/* rdma_connect: a REQ for the peer carrying the connection's parameters, as cm_format_req. */
START_TEST(test_connect_sends_req)
{
	uint32_t id = id_routed(), peer = inet_addr(FX_PEER_IP);
	struct ucma_abi_conn_param invalid = rc_param;
	struct cm_req req;

	invalid.valid = 0;
	ck_assert_int_eq(connect_id(id, &invalid), -EINVAL);
	fx_wire_clear();
	ck_assert_int_eq(connect_id(id, &rc_param), 0);
	ck_assert_uint_eq(fx.nwire, 1);
	ck_assert_uint_eq(cm_mad_attr(wire_mad(0)), CM_ATTR_REQ);
	cm_req_get(wire_mad(0), &req);
	ck_assert_uint_eq(req.local_qpn, 0x000123);
	ck_assert_uint_eq(req.responder_resources, 4);
	ck_assert_uint_eq(req.initiator_depth, 2);
	/* 3 bits on the wire: more retries than 7 are 7. */
	ck_assert_uint_eq(req.retry_count, 7);
	ck_assert_uint_eq(req.rnr_retry_count, 6);
	ck_assert_int_eq(req.transport, CM_TRANSPORT_RC);
	ck_assert_uint_eq(req.service_id, cma_service_id(RDMA_PS_TCP, 4791));
	ck_assert_uint_eq(req.starting_psn >> 24, 0);
	ck_assert_uint_eq(req.mtu, fx.dev->active_mtu);
	ck_assert_mem_eq(&req.remote_gid[12], &peer, 4);
	/* Connecting once: again is EINVAL, and nothing more goes out. */
	ck_assert_int_eq(connect_id(id, &rc_param), -EINVAL);
	ck_assert_uint_eq(fx.nwire, 1);
}
END_TEST

/* The peer's REJ of our REQ: REJECTED with its reason as the status, as the kernel's ucma reports it. */
START_TEST(test_rej_rejects)
{
	uint32_t id = id_routed();
	uint8_t rej[CM_MAD_BYTES];
	struct cm_req req;

	fx_wire_clear();
	ck_assert_int_eq(connect_id(id, &rc_param), 0);
	cm_req_get(wire_mad(0), &req);
	cm_mad_init(rej, CM_ATTR_REJ, rocemu_get_be64(&wire_mad(0)[MAD_OFF_TID]));
	rocemu_put_be32(&rej[CM_LOCAL_COMM_ID], 0x5eed);
	rocemu_put_be32(&rej[CM_REMOTE_COMM_ID], req.local_comm_id);
	rej[CM_REJ_MSG_REJECTED] = CM_REJ_MSG_REQ << 6;
	rocemu_put_be16(&rej[CM_REJ_REASON], CM_REJ_CONSUMER_DEFINED);
	peer_mad(rej);
	expect_event(id, RDMA_CM_EVENT_REJECTED, CM_REJ_CONSUMER_DEFINED);
	/* The same REJ again finds no id waiting for it: dropped and counted. */
	peer_mad(rej);
	ck_assert_uint_eq(fx.dev->counters.rx_cm_dropped, 1);
}
END_TEST

/* What is no CM MAD for QP1 is dropped and counted, and no event comes of it. */
START_TEST(test_stray_mads_dropped)
{
	const struct ucma_abi_get_event get = { .cmd = UCMA_CMD_GET_EVENT };
	struct rocemu_ucma_write_resp resp;
	uint8_t mad[CM_MAD_BYTES];
	uint32_t id = id_routed();

	ck_assert_int_eq(connect_id(id, &rc_param), 0);
	cm_mad_init(mad, CM_ATTR_REP, 1);
	mad[MAD_OFF_CLASS_VERSION] = 1;
	ck_assert(!cm_mad_valid(mad, sizeof(mad)));
	peer_mad(mad);
	ck_assert_uint_eq(fx.dev->counters.rx_cm_dropped, 1);
	/* A REP that answers no REQ of ours. */
	cm_mad_init(mad, CM_ATTR_REP, 1);
	ck_assert(cm_mad_valid(mad, sizeof(mad)));
	ck_assert(!cm_mad_valid(mad, sizeof(mad) - 1));
	rocemu_put_be32(&mad[CM_REMOTE_COMM_ID], 0xdead);
	peer_mad(mad);
	ck_assert_uint_eq(fx.dev->counters.rx_cm_dropped, 2);
	ck_assert_int_eq(ucma(cm, &get, sizeof(get), &resp), -EAGAIN);
}
END_TEST

/* The peer's REQ for the device at port 4791: the REQ a CONNECT of ours sent, addressed to us. */
static void peer_req(uint8_t req[CM_MAD_BYTES])
{
	uint32_t id = id_routed(), dev_ip = inet_addr(FX_DEV_IP);

	fx_wire_clear();
	ck_assert_int_eq(connect_id(id, &rc_param), 0);
	memcpy(req, wire_mad(0), CM_MAD_BYTES);
	memcpy(&req[CM_REQ_PRIVATE_DATA + CMA_HDR_OFF_DST_V4], &dev_ip, sizeof(dev_ip));
	fx_wire_clear();
}

static void listen_on(uint32_t id, uint16_t port)
{
	const struct ucma_abi_listen cmd = { .cmd = UCMA_CMD_LISTEN, .id = id, .backlog = 4 };
	struct rocemu_ucma_write_resp resp;

	ck_assert_int_eq(bind_ip(id, v4(FX_DEV_IP, port)), 0);
	ck_assert_int_eq(ucma(cm, &cmd, sizeof(cmd), &resp), 0);
}

START_TEST(test_passive_side)
{
	struct ucma_abi_accept accept = { .cmd = UCMA_CMD_ACCEPT, .uid = 77,
					  .conn_param = { .qp_num = 0x000456, .responder_resources = 2,
							  .initiator_depth = 4, .rnr_retry_count = 7,
							  .valid = 1 } };
	struct ucma_abi_event_resp ev;
	struct rocemu_ucma_write_resp resp;
	uint8_t req_mad[CM_MAD_BYTES], rtu[CM_MAD_BYTES];
	struct cm_req req;
	struct cm_rep rep;
	uint32_t listener;

	ck_assert_int_eq(create_id(cm, RDMA_PS_TCP, &listener), 0);
	listen_on(listener, 4791);
	peer_req(req_mad);
	cm_req_get(req_mad, &req);
	peer_mad(req_mad);
	/* A new id for the request, reported on the listener's file; the peer's offer crosswise. */
	ev = next_event(RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	ck_assert_uint_ne(ev.id, listener);
	ck_assert_uint_eq(ev.param.conn.qp_num, 0x000123);
	ck_assert_uint_eq(ev.param.conn.responder_resources, 2);
	ck_assert_uint_eq(ev.param.conn.initiator_depth, 4);
	accept.id = ev.id;
	ck_assert_int_eq(ucma(cm, &accept, sizeof(accept), &resp), 0);
	ck_assert_uint_eq(fx.nwire, 1);
	ck_assert_uint_eq(cm_mad_attr(wire_mad(0)), CM_ATTR_REP);
	cm_rep_get(wire_mad(0), &rep, false);
	ck_assert_uint_eq(rep.qpn, 0x000456);
	ck_assert_uint_eq(rep.remote_comm_id, req.local_comm_id);
	/* Our REP lost: the peer's REQ again is answered by the same REP. */
	peer_mad(req_mad);
	ck_assert_uint_eq(fx.nwire, 2);
	ck_assert_mem_eq(wire_mad(1), wire_mad(0), CM_MAD_BYTES);
	cm_mad_init(rtu, CM_ATTR_RTU, rocemu_get_be64(&req_mad[MAD_OFF_TID]));
	rocemu_put_be32(&rtu[CM_LOCAL_COMM_ID], req.local_comm_id);
	rocemu_put_be32(&rtu[CM_REMOTE_COMM_ID], rep.local_comm_id);
	peer_mad(rtu);
	expect_event(ev.id, RDMA_CM_EVENT_ESTABLISHED, 0);
	/* Established: a REQ again is stale and dropped. */
	peer_mad(req_mad);
	ck_assert_uint_eq(fx.nwire, 2);
	ck_assert_uint_eq(fx.dev->counters.rx_cm_dropped, 1);
}
END_TEST

/* cm_match_req: a REQ for a service no one listens on is rejected, INVALID_SERVICE_ID. */
START_TEST(test_req_for_no_listener)
{
	uint8_t req_mad[CM_MAD_BYTES];
	struct cm_req req;
	const uint8_t *rej;

	peer_req(req_mad);
	cm_req_get(req_mad, &req);
	peer_mad(req_mad);
	ck_assert_uint_eq(fx.nwire, 1);
	rej = wire_mad(0);
	ck_assert_uint_eq(cm_mad_attr(rej), CM_ATTR_REJ);
	ck_assert_uint_eq(rocemu_get_be32(&rej[CM_REMOTE_COMM_ID]), req.local_comm_id);
	ck_assert_uint_eq(rocemu_get_be16(&rej[CM_REJ_REASON]), CM_REJ_INVALID_SERVICE_ID);
	ck_assert_uint_eq(rej[CM_REJ_MSG_REJECTED] >> 6, CM_REJ_MSG_REQ);
}
END_TEST

static Suite *ucma_suite(void)
{
	Suite *s = suite_create("ucma");
	TCase *tc = tcase_create("ucma"), *proto = tcase_create("proto");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_open);
	tcase_add_test(tc, test_framing);
	tcase_add_test(tc, test_ids);
	tcase_add_test(tc, test_bind);
	tcase_add_test(tc, test_resolve);
	tcase_add_test(tc, test_destroy_reports_events);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(proto, setup, teardown);
	tcase_add_test(proto, test_connect_sends_req);
	tcase_add_test(proto, test_rej_rejects);
	tcase_add_test(proto, test_stray_mads_dropped);
	tcase_add_test(proto, test_passive_side);
	tcase_add_test(proto, test_req_for_no_listener);
	suite_add_tcase(s, proto);
	return s;
}

int main(void)
{
	return fx_suite_run(ucma_suite());
}
