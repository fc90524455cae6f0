/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A connected QP's path (emulator/obj/qp_path.c): the peer's IPv4 address
 * from the AV's IPv4-mapped GID, port 4791, a source port from the QPN
 * pair and the path MTU in bytes; another peer named later (as DC does);
 * and the UDP source port mlx5dv_modify_qp_udp_sport sets, on the wire
 * from the next packet, with its errnos (an unknown QP, a QP not RC or
 * UC, a QP out of RTS, port 0).
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>

#include "emulator/obj/qp.h"
#include "emulator/obj/qp_path.h"
#include "net/udp/udp_port.h"
#include "tests/unit/fixture.h"

#define NEW_SPORT 50001u

static void send_one(void)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = 8, .lkey = fx.lkey };
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_SEND, .sge = &sge, .num_sge = 1 };

	fx_post_send(&wr);
	fx_doorbell();
}

START_TEST(test_path_of_the_av)
{
	const struct rocemu_qp_path *path = &fx_emu_qp()->path;
	struct in_addr peer;

	ck_assert_int_eq(inet_pton(AF_INET, FX_PEER_IP, &peer), 1);
	ck_assert_uint_eq(path->flow.daddr, peer.s_addr);
	ck_assert_uint_eq(path->flow.saddr, fx.dev->ipv4);
	ck_assert_uint_eq(ntohs(path->flow.dport), ROCEMU_ROCEV2_PORT);
	ck_assert_uint_eq(path->mtu, FX_MTU_BYTES);
	ck_assert(path->holds_sport);
	send_one();
	ck_assert_uint_eq(fx.nwire, 1);
	ck_assert_uint_eq(fx.wire[0].flow.daddr, peer.s_addr);
	ck_assert_uint_eq(fx.wire[0].flow.sport, path->flow.sport);
}
END_TEST

/* Another peer: its address and QP; a path MTU the AV never set is 256 bytes, the least. */
START_TEST(test_path_to_another_peer)
{
	struct rocemu_qp *qp = fx_emu_qp();
	const uint32_t daddr = htonl(0xc0000263);	/* 192.0.2.99 */

	qp->attr.path_mtu = 0;
	rocemu_qp_path_to(qp, daddr, 0x123);
	ck_assert_uint_eq(qp->path.flow.daddr, daddr);
	ck_assert_uint_eq(qp->path.mtu, 256);
	ck_assert(qp->path.holds_sport);
	qp->attr.path_mtu = IBV_MTU_4096;
	rocemu_qp_path_set(qp);
	ck_assert_uint_eq(qp->path.mtu, 4096);
	rocemu_qp_path_release(qp);
	ck_assert(!qp->path.holds_sport);
	/* A second release gives back nothing more. */
	rocemu_qp_path_release(qp);
	ck_assert(!qp->path.holds_sport);
	rocemu_qp_path_set(qp);
}
END_TEST

START_TEST(test_udp_sport_on_the_wire)
{
	const struct rocemu_qp_udp_sport_req req = { .qpn = fx.qp.qpn, .udp_sport = NEW_SPORT };

	ck_assert_int_eq(rocemu_qp_set_udp_sport(fx.client, &req), 0);
	ck_assert_uint_eq(ntohs(fx_emu_qp()->path.flow.sport), NEW_SPORT);
	send_one();
	ck_assert_uint_eq(fx.nwire, 1);
	ck_assert_uint_eq(ntohs(fx.wire[0].flow.sport), NEW_SPORT);
	fx_wire_expect(0, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN, true, 8);
}
END_TEST

START_TEST(test_udp_sport_checks)
{
	struct rocemu_qp_udp_sport_req req = { .qpn = fx.qp.qpn + 1, .udp_sport = NEW_SPORT };
	struct rocemu_client *other = fx_client_new();
	uint16_t before = fx_emu_qp()->path.flow.sport;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_SQD };

	ck_assert_int_eq(rocemu_qp_set_udp_sport(fx.client, &req), -EINVAL);
	req.qpn = fx.qp.qpn;
	ck_assert_int_eq(rocemu_qp_set_udp_sport(other, &req), -EINVAL);
	req.udp_sport = 0;
	ck_assert_int_eq(rocemu_qp_set_udp_sport(fx.client, &req), -EINVAL);
	ck_assert_uint_eq(fx_emu_qp()->path.flow.sport, before);
	/* Out of RTS, the firmware's bad QP state. */
	req.udp_sport = NEW_SPORT;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	ck_assert_int_eq(rocemu_qp_set_udp_sport(fx.client, &req), -EINVAL);
	ck_assert_uint_eq(fx_emu_qp()->path.flow.sport, before);
}
END_TEST

/* mlx5 offers it for RC and UC alone. */
START_TEST(test_udp_sport_not_for_ud)
{
	struct rocemu_qp_udp_sport_req req = { .udp_sport = NEW_SPORT };

	req.qpn = fx.qp.qpn;
	ck_assert_int_eq(rocemu_qp_set_udp_sport(fx.client, &req), -EOPNOTSUPP);
}
END_TEST

static Suite *qp_path_suite(void)
{
	Suite *s = suite_create("qp_path");
	TCase *tc = tcase_create("rc"), *ud = tcase_create("ud");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_path_of_the_av);
	tcase_add_test(tc, test_path_to_another_peer);
	tcase_add_test(tc, test_udp_sport_on_the_wire);
	tcase_add_test(tc, test_udp_sport_checks);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(ud, fx_setup_ud, fx_teardown);
	tcase_add_test(ud, test_udp_sport_not_for_ud);
	suite_add_tcase(s, ud);
	return s;
}

int main(void)
{
	return fx_suite_run(qp_path_suite());
}
