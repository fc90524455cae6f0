/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The addresses and QP attributes of rdma_cm ids (emulator/cm/cm_addr.c),
 * past check_ucma's binds and resolutions: ephemeral ports in Linux's
 * range and apart; the wildcard and loopback binds that listen on every
 * device and take a peer's REQ, a port they hold refused to a bind of the
 * device's address, SO_REUSEADDR shared until one listens; and the
 * attributes rdma_init_qp_attr gives in each state: an unbound id
 * refused, an idle one and a UD one (the UDP Q_Key), the INIT only while
 * the REQ waits, then RTR and RTS from the REP crosswise, UC without
 * retries nor timeout, and RDMA_OPTION_ID_ACK_TIMEOUT taking precedence.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <poll.h>
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
#define EPHEMERAL_FIRST 32768		/* Linux's ip_local_port_range */
#define EPHEMERAL_LAST 60999
#define OUR_QPN 0x000123u
#define PEER_COMM 0x0c0ffee0u
#define PEER_CM_QPN 0x000456u
#define PEER_PSN 0x000555u
#define PEER_ACK_DELAY 12
#define RUN_STEP_NS (5 * 1000 * 1000ull)
#define RUN_STEPS_MAX 2000u

static struct rocemu_client *cm;
static int cm_sock, events_fd;

static void setup(void)
{
	uint32_t file_id;
	int sv[2];

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

static int ucma_opt(const void *cmd, size_t size, const void *opt, uint32_t optlen,
		    struct rocemu_ucma_write_resp *resp)
{
	struct rocemu_ucma_write_req req = { .len = (uint32_t)size, .optlen = optlen };

	memcpy(req.cmd, cmd, size);
	if (optlen)
		memcpy(req.opt, opt, optlen);
	return rocemu_ucma_write(cm, &req, resp);
}

static int ucma(const void *cmd, size_t size, struct rocemu_ucma_write_resp *resp)
{
	return ucma_opt(cmd, size, NULL, 0, resp);
}

static uint32_t create_id(uint16_t ps, uint8_t qp_type)
{
	const struct ucma_abi_create_id cmd = { .cmd = UCMA_CMD_CREATE_ID, .uid = 77,
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

static int bind_ip(uint32_t id, const char *ip, uint16_t port)
{
	const struct ucma_abi_bind_ip cmd = { .cmd = UCMA_CMD_BIND_IP, .id = id,
					      .addr = v4(ip, port) };
	struct rocemu_ucma_write_resp resp;

	return ucma(&cmd, sizeof(cmd), &resp);
}

static int listen_id(uint32_t id)
{
	const struct ucma_abi_listen cmd = { .cmd = UCMA_CMD_LISTEN, .id = id, .backlog = 4 };
	struct rocemu_ucma_write_resp resp;

	return ucma(&cmd, sizeof(cmd), &resp);
}

static int set_option(uint32_t id, uint32_t name, const void *val, uint32_t len)
{
	const struct ucma_abi_set_option cmd = { .cmd = UCMA_CMD_SET_OPTION, .id = id,
						 .level = RDMA_OPTION_ID, .optname = name,
						 .optlen = len };
	struct rocemu_ucma_write_resp resp;

	return ucma_opt(&cmd, sizeof(cmd), val, len, &resp);
}

static uint16_t bound_port(uint32_t id)
{
	const struct ucma_abi_query cmd = { .cmd = UCMA_CMD_QUERY_ROUTE, .id = id,
					    .response = RESPONSE_ADDR };
	struct rocemu_ucma_write_resp resp;
	struct ucma_abi_query_route_resp out;
	struct sockaddr_in src;

	ck_assert_int_eq(ucma(&cmd, sizeof(cmd), &resp), 0);
	memcpy(&out, resp.data, sizeof(out));
	memcpy(&src, &out.src_addr, sizeof(src));
	return ntohs(src.sin_port);
}

static int init_qp_attr(uint32_t id, uint32_t state, struct ib_uverbs_qp_attr *attr)
{
	const struct ucma_abi_init_qp_attr cmd = { .cmd = UCMA_CMD_INIT_QP_ATTR, .id = id,
						   .qp_state = state, .response = RESPONSE_ADDR };
	struct rocemu_ucma_write_resp resp;
	int err = ucma(&cmd, sizeof(cmd), &resp);

	if (!err)
		memcpy(attr, resp.data, sizeof(*attr));
	return err;
}

static struct ucma_abi_event_resp next_event(uint32_t type)
{
	const struct ucma_abi_get_event cmd = { .cmd = UCMA_CMD_GET_EVENT,
						.response = RESPONSE_ADDR };
	struct pollfd p = { .fd = events_fd, .events = POLLIN };
	struct rocemu_ucma_write_resp resp;
	struct ucma_abi_event_resp ev;
	unsigned int step;
	char byte;

	for (step = 0; step < RUN_STEPS_MAX && poll(&p, 1, 0) != 1; step++)
		fx_run(RUN_STEP_NS);
	ck_assert_int_eq(read(events_fd, &byte, 1), 1);
	ck_assert_int_eq(ucma(&cmd, sizeof(cmd), &resp), 0);
	memcpy(&ev, resp.data, sizeof(ev));
	ck_assert_uint_eq(ev.event, type);
	ck_assert_int_eq((int32_t)ev.status, 0);
	return ev;
}

static uint32_t id_routed(uint16_t ps, uint8_t qp_type)
{
	struct ucma_abi_resolve_ip res = { .cmd = UCMA_CMD_RESOLVE_IP,
					   .src_addr = v4(FX_DEV_IP, 0),
					   .dst_addr = v4(FX_PEER_IP, 4791), .timeout_ms = 2000 };
	struct ucma_abi_resolve_route route = { .cmd = UCMA_CMD_RESOLVE_ROUTE,
						.timeout_ms = 2000 };
	struct rocemu_ucma_write_resp resp;
	uint32_t id = create_id(ps, qp_type);

	res.id = route.id = id;
	ck_assert_int_eq(ucma(&res, sizeof(res), &resp), 0);
	next_event(RDMA_CM_EVENT_ADDR_RESOLVED);
	ck_assert_int_eq(ucma(&route, sizeof(route), &resp), 0);
	next_event(RDMA_CM_EVENT_ROUTE_RESOLVED);
	return id;
}

static void peer_mad(const uint8_t *mad)
{
	const struct fx_hdrs h = { .qkey = CM_GSI_QKEY, .dest_qpn = CM_GSI_QPN };

	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY, &h, mad, CM_MAD_BYTES);
}

/* The MAD of the wire's last packet. */
static const uint8_t *last_mad(void)
{
	ck_assert_uint_gt(fx.nwire, 0);
	return fx_wire_bth(fx.nwire - 1) + ROCEMU_BTH_BYTES + ROCEMU_DETH_BYTES;
}

/* CONNECT of id with our QP and depths; its REQ's fields. */
static struct cm_req connect_id(uint32_t id)
{
	const struct ucma_abi_connect cmd = {
		.cmd = UCMA_CMD_CONNECT, .id = id,
		.conn_param = { .qp_num = OUR_QPN, .responder_resources = 4, .initiator_depth = 3,
				.retry_count = 5, .rnr_retry_count = 6, .valid = 1 },
	};
	struct rocemu_ucma_write_resp resp;
	struct cm_req req;

	ck_assert_int_eq(ucma(&cmd, sizeof(cmd), &resp), 0);
	ck_assert_uint_eq(cm_mad_attr(last_mad()), CM_ATTR_REQ);
	cm_req_get(last_mad(), &req);
	return req;
}

/* The peer's REP to the REQ of comm ID comm: 2 READs answered, 1 outstanding, its PSN. */
static void peer_rep(uint32_t comm, uint64_t tid)
{
	const struct cm_rep rep = { .local_comm_id = PEER_COMM, .remote_comm_id = comm,
				    .qpn = PEER_CM_QPN, .starting_psn = PEER_PSN,
				    .responder_resources = 2, .initiator_depth = 1,
				    .target_ack_delay = PEER_ACK_DELAY, .rnr_retry_count = 4 };
	uint8_t mad[CM_MAD_BYTES];

	cm_mad_init(mad, CM_ATTR_REP, tid);
	cm_rep_put(mad, &rep, false);
	peer_mad(mad);
	next_event(RDMA_CM_EVENT_CONNECT_RESPONSE);
}

START_TEST(test_ephemeral_ports)
{
	uint32_t a = create_id(RDMA_PS_TCP, IBV_QPT_RC), b = create_id(RDMA_PS_TCP, IBV_QPT_RC);

	ck_assert_int_eq(bind_ip(a, FX_DEV_IP, 0), 0);
	ck_assert_int_eq(bind_ip(b, FX_DEV_IP, 0), 0);
	ck_assert_uint_ge(bound_port(a), EPHEMERAL_FIRST);
	ck_assert_uint_le(bound_port(a), EPHEMERAL_LAST);
	ck_assert_uint_ge(bound_port(b), EPHEMERAL_FIRST);
	ck_assert_uint_le(bound_port(b), EPHEMERAL_LAST);
	ck_assert_uint_ne(bound_port(a), bound_port(b));
}
END_TEST

/*
 * A listener bound to ip on every device takes the peer's REQ (our own
 * REQ turned back to the device), and holds its port against a bind of
 * the device's address.
 */
static void wildcard_listener(const char *ip)
{
	uint32_t listener = create_id(RDMA_PS_TCP, IBV_QPT_RC), id, dev_ip = inet_addr(FX_DEV_IP);
	uint8_t mad[CM_MAD_BYTES];

	ck_assert_int_eq(bind_ip(listener, ip, 4791), 0);
	ck_assert_int_eq(listen_id(listener), 0);
	ck_assert_int_eq(bind_ip(create_id(RDMA_PS_TCP, IBV_QPT_RC), FX_DEV_IP, 4791), -EADDRINUSE);
	ck_assert_int_eq(bind_ip(create_id(RDMA_PS_TCP, IBV_QPT_RC), ip, 4791), -EADDRINUSE);
	id = id_routed(RDMA_PS_TCP, IBV_QPT_RC);
	fx_wire_clear();
	connect_id(id);
	memcpy(mad, last_mad(), sizeof(mad));
	memcpy(&mad[CM_REQ_PRIVATE_DATA + CMA_HDR_OFF_DST_V4], &dev_ip, sizeof(dev_ip));
	peer_mad(mad);
	ck_assert_uint_ne(next_event(RDMA_CM_EVENT_CONNECT_REQUEST).id, listener);
	/* Taken, not refused: no REJ. */
	ck_assert_uint_eq(fx.nwire, 1);
}

START_TEST(test_wildcard_listener)
{
	wildcard_listener("0.0.0.0");
}
END_TEST

/* A loopback address no device has is the wildcard, as the kernel's cma_any_addr has it. */
START_TEST(test_loopback_listener)
{
	wildcard_listener("127.0.0.1");
}
END_TEST

/* SO_REUSEADDR on both: one port for two ids, until one of them listens. */
START_TEST(test_reuseaddr)
{
	uint32_t a = create_id(RDMA_PS_TCP, IBV_QPT_RC), b = create_id(RDMA_PS_TCP, IBV_QPT_RC);
	uint32_t c = create_id(RDMA_PS_TCP, IBV_QPT_RC), plain = create_id(RDMA_PS_TCP, IBV_QPT_RC);
	int on = 1;

	ck_assert_int_eq(set_option(a, RDMA_OPTION_ID_REUSEADDR, &on, sizeof(on)), 0);
	ck_assert_int_eq(set_option(b, RDMA_OPTION_ID_REUSEADDR, &on, sizeof(on)), 0);
	ck_assert_int_eq(set_option(c, RDMA_OPTION_ID_REUSEADDR, &on, sizeof(on)), 0);
	ck_assert_int_eq(set_option(a, RDMA_OPTION_ID_REUSEADDR, &on, 1), -EINVAL);
	ck_assert_int_eq(bind_ip(a, FX_DEV_IP, 5000), 0);
	ck_assert_int_eq(bind_ip(b, FX_DEV_IP, 5000), 0);
	/* Both must ask for it. */
	ck_assert_int_eq(bind_ip(plain, FX_DEV_IP, 5000), -EADDRINUSE);
	ck_assert_int_eq(listen_id(a), 0);
	ck_assert_int_eq(bind_ip(c, FX_DEV_IP, 5000), -EADDRINUSE);
}
END_TEST

START_TEST(test_qp_attr_idle)
{
	uint32_t rc = create_id(RDMA_PS_TCP, IBV_QPT_RC), ud = create_id(RDMA_PS_UDP, IBV_QPT_UD);
	struct ib_uverbs_qp_attr attr;

	/* No device yet. */
	ck_assert_int_eq(init_qp_attr(rc, IBV_QPS_INIT, &attr), -EINVAL);
	ck_assert_int_eq(bind_ip(rc, FX_DEV_IP, 0), 0);
	ck_assert_int_eq(bind_ip(ud, FX_DEV_IP, 0), 0);
	ck_assert_int_eq(init_qp_attr(rc, IBV_QPS_INIT, &attr), 0);
	ck_assert_uint_eq(attr.qp_attr_mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS);
	ck_assert_uint_eq(attr.qp_access_flags, 0);
	ck_assert_uint_eq(attr.port_num, ROCEMU_PORT_NUM);
	ck_assert_uint_eq(attr.qp_state, IBV_QPS_INIT);
	ck_assert_int_eq(init_qp_attr(ud, IBV_QPS_INIT, &attr), 0);
	ck_assert_uint_eq(attr.qp_attr_mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_QKEY);
	ck_assert_uint_eq(attr.qkey, RDMA_UDP_QKEY);
}
END_TEST

/* While the REQ waits, only INIT; after the REP, RTR and RTS from what both sides offered. */
START_TEST(test_qp_attr_connected_rc)
{
	uint32_t id = id_routed(RDMA_PS_TCP, IBV_QPT_RC), peer = inet_addr(FX_PEER_IP);
	struct ib_uverbs_qp_attr attr;
	struct cm_req req;

	fx_wire_clear();
	req = connect_id(id);
	ck_assert_int_eq(init_qp_attr(id, IBV_QPS_INIT, &attr), 0);
	ck_assert_uint_eq(attr.qp_access_flags, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC);
	ck_assert_int_eq(init_qp_attr(id, IBV_QPS_RTR, &attr), -EINVAL);
	ck_assert_int_eq(init_qp_attr(id, IBV_QPS_RTS, &attr), -EINVAL);
	peer_rep(req.local_comm_id, rocemu_get_be64(&last_mad()[MAD_OFF_TID]));
	ck_assert_int_eq(init_qp_attr(id, IBV_QPS_RTR, &attr), 0);
	ck_assert_uint_eq(attr.qp_attr_mask, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER);
	ck_assert_uint_eq(attr.dest_qp_num, PEER_CM_QPN);
	ck_assert_uint_eq(attr.rq_psn, req.starting_psn);
	ck_assert_uint_eq(attr.path_mtu, fx.dev->active_mtu);
	/* The peer's initiator depth is what this side answers at once. */
	ck_assert_uint_eq(attr.max_dest_rd_atomic, 1);
	ck_assert_uint_eq(attr.ah_attr.is_global, 1);
	ck_assert_uint_eq(attr.ah_attr.port_num, ROCEMU_PORT_NUM);
	ck_assert_uint_eq(attr.ah_attr.grh.hop_limit, 64);
	ck_assert_uint_eq(attr.ah_attr.grh.dgid[10], 0xff);
	ck_assert_mem_eq(&attr.ah_attr.grh.dgid[12], &peer, 4);
	ck_assert_int_eq(init_qp_attr(id, IBV_QPS_RTS, &attr), 0);
	ck_assert_uint_eq(attr.qp_attr_mask, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_TIMEOUT);
	ck_assert_uint_eq(attr.sq_psn, PEER_PSN);
	ck_assert_uint_eq(attr.retry_cnt, 5);
	ck_assert_uint_eq(attr.rnr_retry, 4);
	ck_assert_uint_eq(attr.max_rd_atomic, 2);
	ck_assert_uint_eq(attr.timeout, cm_ack_timeout(PEER_ACK_DELAY, CMA_IBOE_PACKET_LIFETIME));
	/* Other states are not the CM's to give. */
	ck_assert_int_eq(init_qp_attr(id, IBV_QPS_SQD, &attr), -EINVAL);
	ck_assert_int_eq(init_qp_attr(id, IBV_QPS_ERR, &attr), -EINVAL);
}
END_TEST

/* RDMA_OPTION_ID_ACK_TIMEOUT: the RTS timeout the application set, not the path's. */
START_TEST(test_qp_attr_ack_timeout_option)
{
	uint32_t id = id_routed(RDMA_PS_TCP, IBV_QPT_RC);
	struct ib_uverbs_qp_attr attr;
	uint8_t timeout = 19;
	struct cm_req req;

	ck_assert_int_eq(set_option(id, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, 1), 0);
	fx_wire_clear();
	req = connect_id(id);
	peer_rep(req.local_comm_id, rocemu_get_be64(&last_mad()[MAD_OFF_TID]));
	ck_assert_int_eq(init_qp_attr(id, IBV_QPS_RTS, &attr), 0);
	ck_assert_uint_eq(attr.timeout, 19);
}
END_TEST

/* UC: no READs at RTR, no retries nor timeout at RTS. */
START_TEST(test_qp_attr_uc)
{
	uint32_t id = id_routed(RDMA_PS_IB, IBV_QPT_UC);
	struct ib_uverbs_qp_attr attr;
	struct cm_req req;

	fx_wire_clear();
	req = connect_id(id);
	ck_assert_int_eq(req.transport, CM_TRANSPORT_UC);
	peer_rep(req.local_comm_id, rocemu_get_be64(&last_mad()[MAD_OFF_TID]));
	ck_assert_int_eq(init_qp_attr(id, IBV_QPS_RTR, &attr), 0);
	ck_assert_uint_eq(attr.qp_attr_mask & (IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER), 0);
	ck_assert_int_eq(init_qp_attr(id, IBV_QPS_RTS, &attr), 0);
	ck_assert_uint_eq(attr.qp_attr_mask, IBV_QP_STATE | IBV_QP_SQ_PSN);
	ck_assert_uint_eq(attr.sq_psn, PEER_PSN);
}
END_TEST

static Suite *cm_addr_suite(void)
{
	Suite *s = suite_create("cm_addr");
	TCase *tc = tcase_create("cm_addr");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_ephemeral_ports);
	tcase_add_test(tc, test_wildcard_listener);
	tcase_add_test(tc, test_loopback_listener);
	tcase_add_test(tc, test_reuseaddr);
	tcase_add_test(tc, test_qp_attr_idle);
	tcase_add_test(tc, test_qp_attr_connected_rc);
	tcase_add_test(tc, test_qp_attr_ack_timeout_option);
	tcase_add_test(tc, test_qp_attr_uc);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(cm_addr_suite());
}
