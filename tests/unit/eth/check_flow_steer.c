/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Steering (emulator/eth/flow_steer.c, flow.c): priorities, equal
 * priorities, DONT_TRAP, the four attribute types, sniffer copies of
 * Ethernet frames and of RoCE datagrams, rules destroyed, a QP with
 * rules kept from destruction, and a context's death releasing its rules.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <string.h>

#include "emulator/core/device.h"
#include "emulator/ctrl/client_life.h"
#include "emulator/engine/egress.h"
#include "emulator/eth/eth.h"
#include "emulator/eth/flow.h"
#include "emulator/obj/qp.h"
#include "net/roce/icrc.h"
#include "net/udp/udp_port.h"
#include "tests/unit/eth/eth_fx.h"

static const uint8_t broadcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static uint32_t qa, qb;

static void setup(void)
{
	efx_setup();
	qa = efx_qp(1);
	qb = efx_qp(1);
}

static struct rocemu_device *dev(unsigned int i)
{
	return &efx.emu.devices[i];
}

/* A rule to qpn on device 1 matching UDP to dport (0: any frame), of flags. */
static uint32_t udp_rule(uint32_t qpn, uint16_t priority, uint16_t dport, uint32_t flags)
{
	struct ibv_flow_spec_tcp_udp udp = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(udp) };
	struct rocemu_create_flow_req req;

	efx_flow_req(&req, qpn, IBV_FLOW_ATTR_NORMAL, priority);
	req.flags = flags;
	udp.val.dst_port = htons(dport);
	udp.mask.dst_port = dport ? 0xffff : 0;
	if (dport)
		efx_spec(&req, &udp, sizeof(udp));
	return efx_flow(1, &req);
}

static uint32_t typed_rule(uint32_t qpn, enum ibv_flow_attr_type type)
{
	struct rocemu_create_flow_req req;

	efx_flow_req(&req, qpn, type, 0);
	return efx_flow(1, &req);
}

static void send_to(const uint8_t *dmac, uint16_t dport)
{
	uint8_t frame[EFX_FRAME_MAX];

	rocemu_eth_tx(dev(0), frame, efx_udp_frame(frame, dmac, 0, 1000, dport));
}

START_TEST(lower_priority_value_wins)
{
	udp_rule(qa, 3, 4000, 0);
	udp_rule(qb, 1, 0, 0);
	send_to(efx_mac(1), 4000);
	ck_assert_uint_eq(efx_rx_of(qb), 1);
	ck_assert_uint_eq(efx_rx_of(qa), 0);
}
END_TEST

START_TEST(equal_priority_oldest_wins)
{
	udp_rule(qa, 2, 0, 0);
	udp_rule(qb, 2, 4000, 0);
	send_to(efx_mac(1), 4000);
	ck_assert_uint_eq(efx_rx_of(qa), 1);
	ck_assert_uint_eq(efx_rx_of(qb), 0);
}
END_TEST

START_TEST(identical_rules_both_get_it)
{
	udp_rule(qa, 2, 4000, 0);
	udp_rule(qb, 2, 4000, 0);
	send_to(efx_mac(1), 4000);
	ck_assert_uint_eq(efx_rx_of(qa), 1);
	ck_assert_uint_eq(efx_rx_of(qb), 1);
}
END_TEST

START_TEST(dont_trap_lets_the_frame_go_on)
{
	udp_rule(qa, 0, 4000, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	udp_rule(qb, 5, 4000, 0);
	send_to(efx_mac(1), 4000);
	ck_assert_uint_eq(efx_rx_of(qa), 1);
	ck_assert_uint_eq(efx_rx_of(qb), 1);
	/* At one priority a DONT_TRAP rule comes before the trapping one, made later or not. */
	udp_rule(qa, 7, 5000, 0);
	udp_rule(qb, 7, 5000, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	send_to(efx_mac(1), 5000);
	ck_assert_uint_eq(efx_rx_of(qa), 1);
	ck_assert_uint_eq(efx_rx_of(qb), 1);
}
END_TEST

START_TEST(leftovers)
{
	uint32_t qc = efx_qp(1);

	udp_rule(qa, 0, 4000, 0);
	typed_rule(qb, IBV_FLOW_ATTR_ALL_DEFAULT);
	typed_rule(qc, IBV_FLOW_ATTR_MC_DEFAULT);
	/* Taken by a NORMAL rule: no leftover rule sees it. */
	send_to(efx_mac(1), 4000);
	ck_assert_uint_eq(efx_rx_of(qa), 1);
	ck_assert_uint_eq(efx.nrx, 0);
	/* Unicast nobody took: ALL_DEFAULT. */
	send_to(efx_mac(1), 4001);
	ck_assert_uint_eq(efx_rx_of(qb), 1);
	ck_assert_uint_eq(efx_rx_of(qc), 0);
	/* A group frame nobody took: both. */
	send_to(broadcast, 4001);
	ck_assert_uint_eq(efx_rx_of(qb), 1);
	ck_assert_uint_eq(efx_rx_of(qc), 1);
	ck_assert_uint_eq(dev(1)->rx_eth_dropped, 0);
}
END_TEST

START_TEST(frames_nobody_takes_are_counted)
{
	typed_rule(qb, IBV_FLOW_ATTR_MC_DEFAULT);
	send_to(efx_mac(1), 4001);
	ck_assert_uint_eq(efx.nrx, 0);
	ck_assert_uint_eq(dev(1)->rx_eth_dropped, 1);
}
END_TEST

START_TEST(sniffer_sees_what_the_port_sends_and_receives)
{
	uint32_t q0 = efx_qp(0);
	struct rocemu_create_flow_req req;
	uint8_t frame[EFX_FRAME_MAX];
	uint32_t len;

	efx_flow_req(&req, q0, IBV_FLOW_ATTR_SNIFFER, 0);
	efx_flow(0, &req);
	udp_rule(qa, 0, 4000, 0);
	ck_assert_uint_eq(dev(0)->sniffers, 1);
	len = efx_udp_frame(frame, efx_mac(1), 0, 1000, 4000);
	rocemu_eth_tx(dev(0), frame, len);
	ck_assert_uint_eq(efx_rx_of(qa), 1);
	ck_assert_uint_eq(efx.nrx, 1);
	ck_assert_uint_eq(efx.rx[0].len, len);
	ck_assert_mem_eq(efx.rx[0].data, frame, len);
	ck_assert_uint_eq(efx_rx_of(q0), 1);
	/* And what it receives, whether a rule takes it or not. */
	len = efx_udp_frame(frame, efx_mac(0), 1, 1000, 4000);
	rocemu_eth_tx(dev(1), frame, len);
	ck_assert_uint_eq(efx_rx_of(q0), 1);
	ck_assert_uint_eq(dev(0)->rx_eth_dropped, 1);
}
END_TEST

/* The fake RoCE wire: the datagrams egress hands over are not the test's concern. */
static int wire_send(void *arg, const struct rocemu_ipv4_udp *flow, const void *buf, size_t len,
		     uint16_t gso)
{
	return 0;
}

START_TEST(sniffer_sees_roce_framed)
{
	const struct rocemu_ipv4_udp flow = { .saddr = dev(1)->ipv4, .daddr = dev(0)->ipv4,
					      .sport = htons(0xc000),
					      .dport = htons(ROCEMU_ROCEV2_PORT) };
	struct rocemu_create_flow_req req;
	uint8_t pkt[64];
	const uint8_t *udp;

	memset(pkt, 0x5a, sizeof(pkt));
	efx_flow_req(&req, qa, IBV_FLOW_ATTR_SNIFFER, 0);
	efx_flow(1, &req);
	dev(1)->wire = (struct rocemu_wire){ .send = wire_send };
	/* Two packets of 32 bytes in one send: two frames. */
	ck_assert_int_eq(rocemu_egress_send(dev(1), -1, &flow, pkt, sizeof(pkt), 32), 0);
	ck_assert_uint_eq(efx.nrx, 2);
	ck_assert_uint_eq(efx.rx[0].len, 14 + 20 + 8 + 32);
	ck_assert_uint_eq(efx.rx[0].data[12], 0x08);
	ck_assert_uint_eq(efx.rx[0].data[13], 0x00);
	ck_assert_mem_eq(&efx.rx[0].data[14 + 12], &flow.saddr, 4);
	ck_assert_mem_eq(&efx.rx[0].data[14 + 16], &flow.daddr, 4);
	udp = &efx.rx[0].data[14 + 20];
	ck_assert_uint_eq(udp[2] << 8 | udp[3], ROCEMU_ROCEV2_PORT);
	ck_assert_mem_eq(udp + 8, pkt, 32);
	/* The second has the next IPv4 ID. */
	ck_assert_uint_eq((efx.rx[1].data[14 + 5] - efx.rx[0].data[14 + 5]) & 0xff, 1);
	ck_assert_uint_eq(efx_rx_of(qa), 2);
	/* A port without sniffers frames nothing. */
	dev(0)->wire = (struct rocemu_wire){ .send = wire_send };
	ck_assert_int_eq(rocemu_egress_send(dev(0), -1, &flow, pkt, sizeof(pkt), 0), 0);
	ck_assert_uint_eq(efx.nrx, 0);
}
END_TEST

START_TEST(destroyed_rules_take_nothing)
{
	uint32_t h = udp_rule(qa, 0, 4000, 0), s;
	struct rocemu_create_flow_req req;

	efx_flow_req(&req, qb, IBV_FLOW_ATTR_SNIFFER, 0);
	s = efx_flow(1, &req);
	ck_assert_int_eq(rocemu_flow_destroy(efx.client[1], h), 0);
	ck_assert_int_eq(rocemu_flow_destroy(efx.client[1], h), -EINVAL);
	ck_assert_int_eq(rocemu_flow_destroy(efx.client[0], s), -EINVAL);	/* not its */
	send_to(efx_mac(1), 4000);
	ck_assert_uint_eq(efx_rx_of(qa), 0);
	ck_assert_uint_eq(efx_rx_of(qb), 1);
	ck_assert_int_eq(rocemu_flow_destroy(efx.client[1], s), 0);
	ck_assert_uint_eq(dev(1)->sniffers, 0);
	ck_assert(rocemu_list_empty(&dev(1)->flows));
}
END_TEST

START_TEST(a_qp_with_rules_is_busy)
{
	uint32_t h = udp_rule(qa, 0, 4000, 0);

	ck_assert_int_eq(rocemu_qp_destroy(efx.client[1], qa), -EBUSY);
	ck_assert_int_eq(rocemu_flow_destroy(efx.client[1], h), 0);
	ck_assert_int_eq(rocemu_qp_destroy(efx.client[1], qa), 0);
}
END_TEST

START_TEST(a_context_death_releases_its_rules)
{
	struct rocemu_create_flow_req req;

	udp_rule(qa, 0, 4000, 0);
	efx_flow_req(&req, qb, IBV_FLOW_ATTR_SNIFFER, 0);
	efx_flow(1, &req);
	typed_rule(qb, IBV_FLOW_ATTR_ALL_DEFAULT);
	ck_assert_uint_eq(efx.emu.flows.used, 3);
	rocemu_client_free(efx.client[1]);
	efx.client[1] = NULL;
	ck_assert_uint_eq(efx.emu.flows.used, 0);
	ck_assert_uint_eq(dev(1)->sniffers, 0);
	ck_assert(rocemu_list_empty(&dev(1)->flows));
	send_to(efx_mac(1), 4000);
	ck_assert_uint_eq(efx.nrx, 0);
	ck_assert_uint_eq(dev(1)->rx_eth_dropped, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("flow_steer");
	TCase *tc = tcase_create("steer");

	tcase_add_checked_fixture(tc, setup, efx_teardown);
	tcase_add_test(tc, lower_priority_value_wins);
	tcase_add_test(tc, equal_priority_oldest_wins);
	tcase_add_test(tc, identical_rules_both_get_it);
	tcase_add_test(tc, dont_trap_lets_the_frame_go_on);
	tcase_add_test(tc, leftovers);
	tcase_add_test(tc, frames_nobody_takes_are_counted);
	tcase_add_test(tc, sniffer_sees_what_the_port_sends_and_receives);
	tcase_add_test(tc, sniffer_sees_roce_framed);
	tcase_add_test(tc, destroyed_rules_take_nothing);
	tcase_add_test(tc, a_qp_with_rules_is_busy);
	tcase_add_test(tc, a_context_death_releases_its_rules);
	suite_add_tcase(s, tc);
	return efx_suite_run(s);
}
