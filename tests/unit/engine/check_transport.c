/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Transports behind the ops table (emulator/engine/transport.c) and the receive
 * path's dispatch by opcode class (emulator/engine/rx.c): each QP type and each
 * opcode class finds its transport or none; a packet reaches a QP only
 * through the QP's own transport, anything else is dropped and counted.
 */
#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emulator/core/client.h"
#include "emulator/engine/rx.h"
#include "emulator/engine/transport.h"
#include "emulator/obj/qp.h"
#include "emulator/rc/rc.h"
#include "net/roce/roce_hdr.h"
#include "net/udp/udp_port.h"
#include "rocemu/ring.h"

#define DEV_ADDR "127.0.100.1"
#define PEER_ADDR "127.0.100.2"
#define PEER_SPORT 0xc123
#define EPSN 100

/* ---------------- lookups ---------------- */

START_TEST(test_qp_type_rc)
{
	ck_assert_ptr_eq(rocemu_transport_of_qp_type(IBV_QPT_RC), &rocemu_rc_transport);
}
END_TEST

START_TEST(test_qp_type_uc)
{
	ck_assert_ptr_eq(rocemu_transport_of_qp_type(IBV_QPT_UC), &rocemu_uc_transport);
}
END_TEST

START_TEST(test_qp_type_ud)
{
	ck_assert_ptr_eq(rocemu_transport_of_qp_type(IBV_QPT_UD), &rocemu_ud_transport);
}
END_TEST

/* Initiator and target share one transport: a packet finds it by its class alone. */
START_TEST(test_qp_type_xrc)
{
	ck_assert_ptr_eq(rocemu_transport_of_qp_type(IBV_QPT_XRC_SEND), &rocemu_xrc_transport);
	ck_assert_ptr_eq(rocemu_transport_of_qp_type(IBV_QPT_XRC_RECV), &rocemu_xrc_transport);
}
END_TEST

/* mlx5 DC: DCI and DCT share one transport, as XRC's two types do. */
START_TEST(test_qp_type_dc)
{
	ck_assert_ptr_eq(rocemu_transport_of_qp_type(ROCEMU_QPT_DCI), &rocemu_dc_transport);
	ck_assert_ptr_eq(rocemu_transport_of_qp_type(ROCEMU_QPT_DCT), &rocemu_dc_transport);
}
END_TEST

/* RAW_PACKET: frames come by steering, not by a BTH opcode class. */
START_TEST(test_qp_type_raw)
{
	ck_assert_ptr_eq(rocemu_transport_of_qp_type(IBV_QPT_RAW_PACKET), &rocemu_raw_transport);
}
END_TEST

static const enum ibv_qp_type types_without_transport[] = {
	IBV_QPT_DRIVER,
};

START_TEST(test_qp_type_none)
{
	ck_assert_ptr_null(rocemu_transport_of_qp_type(types_without_transport[_i]));
}
END_TEST

/*
 * Bits 7:5 name the transport: RC 0x00-0x1f, UC 0x20-0x3f, DC 0x40-0x5f
 * (RD's class, as Wireshark decodes mlx5 DC), UD 0x60-0x7f, XRC 0xa0-0xbf,
 * the rest nobody's.
 */
START_TEST(test_opcode_class)
{
	const struct rocemu_transport_ops *want = _i < 0x20 ? &rocemu_rc_transport :
						  _i < 0x40 ? &rocemu_uc_transport :
						  _i < 0x60 ? &rocemu_dc_transport :
						  _i >= 0x60 && _i < 0x80 ? &rocemu_ud_transport :
						  _i >= 0xa0 && _i < 0xc0 ? &rocemu_xrc_transport :
						  NULL;

	ck_assert_ptr_eq(rocemu_transport_of_opcode((uint8_t)_i), want);
}
END_TEST

static const struct {
	const struct rocemu_transport_ops *ops;
	const char *name;
	bool connected;
} transports[] = {
	{ &rocemu_rc_transport, "RC", true },
	{ &rocemu_uc_transport, "UC", true },
	{ &rocemu_ud_transport, "UD", false },
	{ &rocemu_xrc_transport, "XRC", true },
	{ &rocemu_dc_transport, "DC", false },
};

START_TEST(test_ops_complete)
{
	const struct rocemu_transport_ops *t = transports[_i].ops;

	ck_assert_str_eq(t->name, transports[_i].name);
	ck_assert(t->connected == transports[_i].connected);
	ck_assert(t->init && t->destroy && t->modified && t->post && t->flush && t->rx &&
		  t->timer && t->sq_draining);
}
END_TEST

/* ---------------- rx dispatch ---------------- */

static struct rocemu_emu emu;
static struct rocemu_device dev;
static struct rocemu_client client;
static struct rocemu_qp qp;
static int events[2];		/* the client's async event pipe */
static unsigned int other_rx_calls;

static void other_rx(struct rocemu_qp *q, const struct rocemu_pkt *pkt)
{
	other_rx_calls++;
}

/* A transport that is not RC, to stand for any other. */
static const struct rocemu_transport_ops other_transport = { .name = "OTHER", .rx = other_rx };

/* An RC QP in RTR expecting PSN EPSN, alone on a device with no socket. */
static void rx_setup(void)
{
	memset(&emu, 0, sizeof(emu));
	rocemu_list_init(&emu.clients);
	rocemu_idtable_init(&emu.qps, ROCEMU_FIRST_QPN, 16);
	rocemu_device_init(&dev, 0, "rocemu0", inet_addr(DEV_ADDR), 9000);
	dev.emu = &emu;
	ck_assert_int_eq(pipe2(events, O_NONBLOCK), 0);
	client = (struct rocemu_client){ .emu = &emu, .dev = &dev, .async_fd = events[1],
					 .kick_fd = -1 };
	memset(&qp, 0, sizeof(qp));
	qp.owner = &client;
	qp.type = IBV_QPT_RC;
	qp.ops = rocemu_transport_of_qp_type(IBV_QPT_RC);
	qp.attr.qp_state = IBV_QPS_RTR;
	ck_assert_int_eq(rocemu_rc_init(&qp), 0);
	qp.rc->resp.epsn = EPSN;
	qp.path.flow.daddr = inet_addr(PEER_ADDR);
	ck_assert_int_eq(rocemu_idtable_alloc(&emu.qps, &qp, &qp.qpn), 0);
	other_rx_calls = 0;
}

static void rx_teardown(void)
{
	rocemu_rc_destroy(&qp);
	rocemu_idtable_free(&emu.qps);
	close(events[0]);
	close(events[1]);
}

/* Build opcode for destqp with psn, its ICRC right, and hand it to the receive path. */
static void receive_from(const char *src, uint8_t opcode, uint32_t destqp, uint32_t psn)
{
	const struct rocemu_opcode_info *info = rocemu_opcode_info(opcode);
	struct rocemu_ipv4_udp flow = { .saddr = inet_addr(src), .daddr = dev.ipv4,
					.sport = htons(PEER_SPORT),
					.dport = htons(ROCEMU_ROCEV2_PORT) };
	uint8_t pkt[64] = { 0 };
	struct rocemu_dgram d = { .data = pkt };

	ck_assert_ptr_nonnull(info);
	rocemu_bth_set_opcode(pkt, opcode);
	rocemu_bth_set_tver(pkt, ROCEMU_BTH_TVER);
	rocemu_bth_set_pkey(pkt, 0xffff);
	rocemu_bth_set_destqp(pkt, destqp);
	rocemu_bth_set_psn(pkt, psn);
	d.len = rocemu_icrc_append_v4(&flow, pkt, info->length, 0);
	d.src.sin_family = AF_INET;
	d.src.sin_addr.s_addr = flow.saddr;
	d.src.sin_port = flow.sport;
	rocemu_rx_datagram(&dev, &d);
}

/* Build a packet from the QP's peer and hand it to the receive path. */
static void receive(uint8_t opcode, uint32_t destqp, uint32_t psn)
{
	receive_from(PEER_ADDR, opcode, destqp, psn);
}

/* The async events the QP gave, as the application would read them. */
static unsigned int events_read(enum ibv_event_type want)
{
	struct rocemu_async_record rec;
	unsigned int n = 0;

	while (read(events[0], &rec, sizeof(rec)) == sizeof(rec)) {
		ck_assert_uint_eq(rec.event_type, want);
		n++;
	}
	return n;
}

/* Control: an RC packet reaches the RC QP (COMM_EST in RTR, and a duplicate counted). */
START_TEST(test_rc_packet_to_rc_qp)
{
	receive(ROCEMU_OP_RC_SEND_ONLY, qp.qpn, EPSN - 1);
	ck_assert_uint_eq(dev.rx_dropped, 0);
	ck_assert_uint_eq(events_read(IBV_EVENT_COMM_EST), 1);
	ck_assert_uint_eq(dev.counters.duplicate_request, 1);
}
END_TEST

/* The one datagram received was dropped, counted, and no transport saw it. */
static void assert_dropped_unseen(void)
{
	ck_assert_uint_eq(dev.rx_datagrams, 1);
	ck_assert_uint_eq(dev.rx_dropped, 1);
	ck_assert_uint_eq(other_rx_calls, 0);
	ck_assert_uint_eq(events_read(IBV_EVENT_COMM_EST), 0);
	ck_assert_uint_eq(dev.counters.duplicate_request, 0);
}

/* An RC packet whose ICRC is right but whose source is not the QP's peer (rxe check_addr). */
START_TEST(test_rc_packet_from_stranger)
{
	receive_from(DEV_ADDR, ROCEMU_OP_RC_SEND_ONLY, qp.qpn, EPSN - 1);
	assert_dropped_unseen();
}
END_TEST

/* Valid packets of other transports than RC. */
static const uint8_t foreign_opcodes[] = {
	ROCEMU_OP_UD_SEND_ONLY, ROCEMU_OP_UD_SEND_ONLY_WITH_IMMEDIATE,
	ROCEMU_OP_UC_SEND_ONLY, ROCEMU_OP_UC_RDMA_WRITE_ONLY,
	ROCEMU_OP_XRC_SEND_ONLY, ROCEMU_OP_XRC_ACKNOWLEDGE,
};

START_TEST(test_foreign_packet_to_rc_qp)
{
	receive(foreign_opcodes[_i], qp.qpn, EPSN - 1);
	assert_dropped_unseen();
}
END_TEST

/* A QP of another transport never sees an RC packet, however valid. */
START_TEST(test_rc_packet_to_other_qp)
{
	qp.ops = &other_transport;
	receive(ROCEMU_OP_RC_SEND_ONLY, qp.qpn, EPSN - 1);
	assert_dropped_unseen();
}
END_TEST

START_TEST(test_rc_packet_to_no_qp)
{
	receive(ROCEMU_OP_RC_SEND_ONLY, qp.qpn + 1, EPSN - 1);
	assert_dropped_unseen();
}
END_TEST

static Suite *transport_suite(void)
{
	Suite *s = suite_create("transport");
	TCase *lookup = tcase_create("lookup");
	TCase *rx = tcase_create("rx dispatch");

	tcase_add_test(lookup, test_qp_type_rc);
	tcase_add_test(lookup, test_qp_type_uc);
	tcase_add_test(lookup, test_qp_type_ud);
	tcase_add_test(lookup, test_qp_type_xrc);
	tcase_add_test(lookup, test_qp_type_dc);
	tcase_add_test(lookup, test_qp_type_raw);
	tcase_add_loop_test(lookup, test_qp_type_none, 0,
			    sizeof(types_without_transport) / sizeof(types_without_transport[0]));
	tcase_add_loop_test(lookup, test_opcode_class, 0, 256);
	tcase_add_loop_test(lookup, test_ops_complete, 0,
			    sizeof(transports) / sizeof(transports[0]));
	suite_add_tcase(s, lookup);
	tcase_add_checked_fixture(rx, rx_setup, rx_teardown);
	tcase_add_test(rx, test_rc_packet_to_rc_qp);
	tcase_add_test(rx, test_rc_packet_from_stranger);
	tcase_add_loop_test(rx, test_foreign_packet_to_rc_qp, 0,
			    sizeof(foreign_opcodes) / sizeof(foreign_opcodes[0]));
	tcase_add_test(rx, test_rc_packet_to_other_qp);
	tcase_add_test(rx, test_rc_packet_to_no_qp);
	suite_add_tcase(s, rx);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(transport_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
