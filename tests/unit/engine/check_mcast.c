/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Multicast attach and detach (emulator/engine/mcast.c) through the
 * functions ATTACH_MCAST and DETACH_MCAST call: what ibv_attach_mcast(3)
 * refuses with EINVAL (a QP not UD or not the client's, an MGID that is no
 * IPv4-mapped multicast address, as rdma_gid2ip reads it) and a detach of
 * a QP not attached. Joining a group needs the host's multicast routing,
 * so the attach that succeeds is the end-to-end tests' (ud_uc/mcast.sh).
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <string.h>

#include "emulator/engine/mcast.h"
#include "emulator/obj/qp.h"
#include "tests/unit/fixture.h"

/* ::ffff:a.b.c.d, the MGID of the IPv4 group ip. */
static struct rocemu_mcast_req req_of(uint32_t qpn, const char *ip)
{
	struct rocemu_mcast_req req = { .qpn = qpn };
	uint32_t addr = inet_addr(ip);

	req.mgid[10] = 0xff;
	req.mgid[11] = 0xff;
	memcpy(&req.mgid[12], &addr, sizeof(addr));
	return req;
}

START_TEST(test_attach_refused)
{
	struct rocemu_mcast_req req = req_of(fx.qp.qpn, "192.0.2.9");

	/* A unicast address is no group. */
	ck_assert_int_eq(rocemu_mcast_attach(fx.client, &req), -EINVAL);
	/* An IPv6 group (ff02::1) is no IPv4-mapped address. */
	memset(req.mgid, 0, sizeof(req.mgid));
	req.mgid[0] = 0xff;
	req.mgid[1] = 0x02;
	req.mgid[15] = 1;
	ck_assert_int_eq(rocemu_mcast_attach(fx.client, &req), -EINVAL);
	req = req_of(fx.qp.qpn + 1000, "239.1.2.3");
	ck_assert_int_eq(rocemu_mcast_attach(fx.client, &req), -EINVAL);
	ck_assert(!rocemu_mcast_qp_attached(fx_emu_qp()));
}
END_TEST

/* Only UD QPs join groups. */
START_TEST(test_attach_rc_refused)
{
	const struct rocemu_mcast_req req = req_of(fx.qp.qpn, "239.1.2.3");

	ck_assert_int_eq(rocemu_mcast_attach(fx.client, &req), -EINVAL);
}
END_TEST

START_TEST(test_detach_not_attached)
{
	const struct rocemu_mcast_req req = req_of(fx.qp.qpn, "239.1.2.3");

	ck_assert_int_eq(rocemu_mcast_detach(fx.client, &req), -EINVAL);
	/* A QP in no group is destroyed at once (EBUSY only while attached). */
	ck_assert_int_eq(rocemu_qp_destroy(fx.client, fx.qp.qpn), 0);
}
END_TEST

static Suite *mcast_suite(void)
{
	Suite *s = suite_create("mcast");
	TCase *ud = tcase_create("ud"), *rc = tcase_create("rc");

	tcase_add_checked_fixture(ud, fx_setup_ud, fx_teardown);
	tcase_add_test(ud, test_attach_refused);
	tcase_add_test(ud, test_detach_not_attached);
	suite_add_tcase(s, ud);
	tcase_add_checked_fixture(rc, fx_setup, fx_teardown);
	tcase_add_test(rc, test_attach_rc_refused);
	suite_add_tcase(s, rc);
	return s;
}

int main(void)
{
	return fx_suite_run(mcast_suite());
}
