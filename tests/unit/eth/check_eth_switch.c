/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The port's switch (emulator/eth/eth_switch.c): unicast by destination
 * MAC between the daemon's devices (to the sender itself for its own MAC,
 * as a ConnectX loops it back), group frames to every device, the sender too,
 * and the wire, a frame for no local MAC to the wire, nothing through a
 * port that is down, and a delivery that sends does not recurse.
 */
#include <check.h>
#include <string.h>

#include "emulator/core/device.h"
#include "emulator/eth/eth.h"
#include "emulator/obj/qp.h"
#include "tests/unit/eth/eth_fx.h"

static const uint8_t broadcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 };
static const uint8_t nobody[6] = { 0x02, 0x00, 0xc6, 0x33, 0x64, 0x09 };
static uint32_t qp[EFX_DEVS];

/* On each device a QP taking every frame (ALL_DEFAULT). */
static void setup(void)
{
	struct rocemu_create_flow_req req;
	unsigned int i;

	efx_setup();
	for (i = 0; i < EFX_DEVS; i++) {
		qp[i] = efx_qp(i);
		efx_flow_req(&req, qp[i], IBV_FLOW_ATTR_ALL_DEFAULT, 0);
		efx_flow(i, &req);
	}
}

static struct rocemu_device *dev(unsigned int i)
{
	return &efx.emu.devices[i];
}

START_TEST(unicast_by_mac)
{
	uint8_t frame[EFX_FRAME_MAX];
	uint32_t len = efx_udp_frame(frame, efx_mac(1), 0, 1000, 2000);

	rocemu_eth_tx(dev(0), frame, len);
	ck_assert_uint_eq(efx_rx_of(qp[1]), 1);
	ck_assert_uint_eq(efx_rx_of(qp[0]), 0);
	ck_assert_uint_eq(efx_rx_of(qp[2]), 0);
	ck_assert_uint_eq(efx.nwire, 0);
	ck_assert_uint_eq(dev(0)->counters.port_xmit_packets, 1);
	ck_assert_uint_eq(dev(1)->counters.port_rcv_packets, 1);
	ck_assert_uint_eq(dev(2)->counters.port_rcv_packets, 0);
	/* and back */
	len = efx_udp_frame(frame, efx_mac(0), 1, 2000, 1000);
	rocemu_eth_tx(dev(1), frame, len);
	ck_assert_uint_eq(efx_rx_of(qp[0]), 1);
	ck_assert_uint_eq(efx.nrx, 0);
}
END_TEST

START_TEST(own_mac_loops_back)
{
	uint8_t frame[EFX_FRAME_MAX];
	uint32_t len = efx_udp_frame(frame, efx_mac(0), 0, 1000, 2000);

	rocemu_eth_tx(dev(0), frame, len);
	ck_assert_uint_eq(efx_rx_of(qp[0]), 1);
	ck_assert_uint_eq(efx_rx_of(qp[1]), 0);
	ck_assert_uint_eq(efx_rx_of(qp[2]), 0);
	ck_assert_uint_eq(efx.nwire, 0);
	ck_assert_uint_eq(dev(0)->counters.port_xmit_packets, 1);
	ck_assert_uint_eq(dev(0)->counters.port_rcv_packets, 1);
}
END_TEST

START_TEST(group_frames_to_all_and_the_wire)
{
	uint8_t frame[EFX_FRAME_MAX];
	uint32_t len = efx_udp_frame(frame, broadcast, 0, 1000, 2000);

	rocemu_eth_tx(dev(0), frame, len);
	ck_assert_uint_eq(efx_rx_of(qp[0]), 1);
	ck_assert_uint_eq(efx_rx_of(qp[1]), 1);
	ck_assert_uint_eq(efx_rx_of(qp[2]), 1);
	ck_assert_uint_eq(efx.nwire, 1);
	ck_assert_uint_eq(efx.wire_len, len);
	len = efx_udp_frame(frame, mcast, 2, 1000, 2000);
	rocemu_eth_tx(dev(2), frame, len);
	ck_assert_uint_eq(efx_rx_of(qp[0]), 1);
	ck_assert_uint_eq(efx_rx_of(qp[1]), 1);
	ck_assert_uint_eq(efx_rx_of(qp[2]), 1);
	ck_assert_uint_eq(efx.nwire, 2);
}
END_TEST

START_TEST(unknown_unicast_to_the_wire_only)
{
	uint8_t frame[EFX_FRAME_MAX];
	uint32_t len = efx_udp_frame(frame, nobody, 0, 1000, 2000);

	rocemu_eth_tx(dev(0), frame, len);
	ck_assert_uint_eq(efx.nrx, 0);
	ck_assert_uint_eq(efx.nwire, 1);
	/* Without a wire it is gone, and nothing else happens. */
	efx.emu.eth_wire_tx = NULL;
	rocemu_eth_tx(dev(0), frame, len);
	ck_assert_uint_eq(efx.nrx, 0);
	ck_assert_uint_eq(efx.nwire, 1);
}
END_TEST

START_TEST(nothing_through_a_down_port)
{
	uint8_t frame[EFX_FRAME_MAX];
	uint32_t len = efx_udp_frame(frame, efx_mac(1), 0, 1000, 2000);

	dev(1)->port_state = IBV_PORT_DOWN;
	rocemu_eth_tx(dev(0), frame, len);
	ck_assert_uint_eq(efx.nrx, 0);
	ck_assert_uint_eq(dev(1)->counters.port_rcv_packets, 0);
	ck_assert_uint_eq(dev(1)->rx_eth_dropped, 1);
	/* A broadcast reaches the ports that are up only. */
	len = efx_udp_frame(frame, broadcast, 0, 1000, 2000);
	rocemu_eth_tx(dev(0), frame, len);
	ck_assert_uint_eq(efx_rx_of(qp[0]), 1);
	ck_assert_uint_eq(efx_rx_of(qp[2]), 1);
	ck_assert_uint_eq(efx_rx_of(qp[1]), 0);
	/* A port that is down sends nothing. */
	rocemu_eth_tx(dev(1), frame, len);
	ck_assert_uint_eq(efx.nrx, 0);
	ck_assert_uint_eq(efx.nwire, 1);
	ck_assert_uint_eq(dev(1)->counters.port_xmit_packets, 0);
	ck_assert_uint_eq(dev(1)->counters.port_xmit_discards, 1);
}
END_TEST

START_TEST(runt_frames_dropped)
{
	uint8_t frame[EFX_FRAME_MAX];

	efx_udp_frame(frame, efx_mac(1), 0, 1000, 2000);
	rocemu_eth_tx(dev(0), frame, ROCEMU_ETH_HLEN - 1);
	ck_assert_uint_eq(dev(0)->counters.port_xmit_discards, 1);
	rocemu_eth_rx(dev(1), frame, 3);
	ck_assert_uint_eq(dev(1)->rx_eth_dropped, 1);
	ck_assert_uint_eq(efx.nrx, 0);
}
END_TEST

/* Each device answers what it receives by sending it back, for a while; deliveries never nest. */
static unsigned int depth, max_depth, answers;

static void answer(struct rocemu_qp *q, const struct rocemu_eth_frame *f)
{
	uint8_t back[EFX_FRAME_MAX];
	unsigned int from = q->owner->dev->index;

	if (++depth > max_depth)
		max_depth = depth;
	if (answers < 20) {
		answers++;
		memcpy(back, f->data, f->len);
		memcpy(back, f->smac, ROCEMU_ETH_ALEN);
		memcpy(back + ROCEMU_ETH_ALEN, efx_mac(from), ROCEMU_ETH_ALEN);
		rocemu_eth_tx(q->owner->dev, back, f->len);
	}
	depth--;
}

START_TEST(a_delivery_that_sends_does_not_recurse)
{
	uint8_t frame[EFX_FRAME_MAX];
	uint32_t len = efx_udp_frame(frame, efx_mac(1), 0, 1000, 2000);

	efx.on_rx = answer;
	rocemu_eth_tx(dev(0), frame, len);
	ck_assert_uint_eq(answers, 20);
	ck_assert_uint_eq(max_depth, 1);
	ck_assert_uint_eq(efx_rx_of(qp[1]) + efx_rx_of(qp[0]), 21);
	ck_assert_uint_eq(dev(0)->counters.port_xmit_packets, 11);
	ck_assert_uint_eq(dev(1)->counters.port_xmit_packets, 10);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("eth_switch");
	TCase *tc = tcase_create("switch");

	tcase_add_checked_fixture(tc, setup, efx_teardown);
	tcase_add_test(tc, unicast_by_mac);
	tcase_add_test(tc, own_mac_loops_back);
	tcase_add_test(tc, group_frames_to_all_and_the_wire);
	tcase_add_test(tc, unknown_unicast_to_the_wire_only);
	tcase_add_test(tc, nothing_through_a_down_port);
	tcase_add_test(tc, runt_frames_dropped);
	tcase_add_test(tc, a_delivery_that_sends_does_not_recurse);
	suite_add_tcase(s, tc);
	return efx_suite_run(s);
}
