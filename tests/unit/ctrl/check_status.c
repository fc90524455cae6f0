/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The text of `rocemu status` (emulator/ctrl/status.c) on the fixture's
 * emulator: the daemon's line, the device's line (MAC, port state, MTU,
 * capture) and its VXLAN line, one block per context with its PD, MR, CQs, SRQ, channel and
 * QPs in their states, one line per process, and -ENOSPC when it does
 * not fit. Scripts grep these lines: the test pins their format.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emulator/ctrl/emu_life.h"
#include "emulator/ctrl/status.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/comp_channel.h"
#include "emulator/obj/srq.h"
#include "emulator/observe/capture.h"
#include "emulator/vxlan/vxlan_fdb.h"
#include "tests/unit/fixture.h"

#define STATUS_MAX (64 * 1024)
/* The fixture's MAC, 02:00 and its address (device.c's default), as status shows it. */
#define FX_DEV_MAC_TEXT "mac 02:00:c0:00:02:01"

static char text[STATUS_MAX];

/* The status text, checked NUL-terminated at the length returned. */
static const char *status(void)
{
	int n = rocemu_status_text(&fx.emu, text, sizeof(text));

	ck_assert_int_gt(n, 0);
	ck_assert_uint_eq(strlen(text) + 1, (size_t)n);
	return text;
}

/* How many whole lines of the status text are line. */
static unsigned int line_count(const char *line)
{
	size_t len = strlen(line);
	unsigned int count = 0;
	const char *p;

	for (p = status(); *p; p = strchr(p, '\n') + 1) {
		if (!strncmp(p, line, len) && p[len] == '\n')
			count++;
		ck_assert_ptr_nonnull(strchr(p, '\n'));
	}
	return count;
}

__attribute__((format(printf, 1, 2)))
static unsigned int line_count_fmt(const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return line_count(line);
}

/* The line is in the status text, once. */
#define expect_line(...) \
	ck_assert_msg(line_count_fmt(__VA_ARGS__) == 1, "line missing or repeated in:\n%s", text)

START_TEST(test_daemon_and_device_lines)
{
	char head[64];

	status();
	snprintf(head, sizeof(head), "rocemud pid %d backend epoll delivery ", (int)getpid());
	ck_assert_msg(!strncmp(text, head, strlen(head)), "first line: %s", text);
	ck_assert_ptr_nonnull(strstr(text, " poll sleep wire "));
	/* The fixture's device: ACTIVE, a 9000-byte netdev carrying 4096-byte IB MTUs, no capture. */
	expect_line("device rocemu0 " FX_DEV_IP " " FX_DEV_MAC_TEXT " port ACTIVE mtu 4096");
}
END_TEST

START_TEST(test_context_objects)
{
	const struct rocemu_reg_mr_req mr_req = { .pdn = fx.pdn, .access = IBV_ACCESS_LOCAL_WRITE,
						  .addr = (uintptr_t)fx.buf, .length = 4096,
						  .iova = (uintptr_t)fx.buf };
	struct rocemu_reg_mr_resp mr;
	struct rocemu_query_srq_resp srq;
	uint32_t channel;
	int channel_fd;

	/* The comm is this program's, as /proc gives it. */
	ck_assert_str_eq(fx.client->comm, "check_status");
	expect_line("client pid %d comm check_status device rocemu0", (int)getpid());
	expect_line("  pd %u", fx.pdn);
	expect_line("  cq 0x%06x cqe %u", fx.scq.cqn, fx.scq.layout.ncqe - 1);
	expect_line("  cq 0x%06x cqe %u", fx.rcq.cqn, fx.rcq.layout.ncqe - 1);
	expect_line("  qp 0x%06x RC RTS pd %u", fx.qp.qpn, fx.pdn);
	ck_assert_int_eq(rocemu_mr_reg(fx.client, &mr_req, &mr), 0);
	expect_line("  mr %u pd %u lkey 0x%08x len 4096", mr.handle, fx.pdn, mr.lkey);
	ck_assert_int_eq(rocemu_channel_create(fx.client, &channel, &channel_fd), 0);
	expect_line("  channel %u", channel);
	fx_srq_create();
	/* As ibv_query_srq tells the sizes granted. */
	ck_assert_int_eq(rocemu_srq_query(fx.client, fx.srq.srqn, &srq), 0);
	expect_line("  srq 0x%06x pd %u wr %u sge %u limit 0 qps 0", fx.srq.srqn, fx.pdn,
		    srq.attr.max_wr, srq.attr.max_sge);
	fx_qp_replace_srq(IBV_QPT_RC);
	expect_line("  srq 0x%06x pd %u wr %u sge %u limit 0 qps 1", fx.srq.srqn, fx.pdn,
		    srq.attr.max_wr, srq.attr.max_sge);
	/* Gone objects leave the report. */
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, mr.handle), 0);
	ck_assert_uint_eq(line_count_fmt("  mr %u pd %u lkey 0x%08x len 4096", mr.handle, fx.pdn,
					 mr.lkey), 0);
	ck_assert_int_eq(rocemu_channel_destroy(fx.client, channel), 0);
	close(channel_fd);
	ck_assert_uint_eq(line_count_fmt("  channel %u", channel), 0);
}
END_TEST

/* The QP's line follows its state; an XRC target would name its domain instead of a PD. */
START_TEST(test_qp_state_changes)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	expect_line("  qp 0x%06x RC ERR pd %u", fx.qp.qpn, fx.pdn);
	attr.qp_state = IBV_QPS_RESET;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	expect_line("  qp 0x%06x RC RESET pd %u", fx.qp.qpn, fx.pdn);
	fx_qp_replace(IBV_QPT_UC);
	expect_line("  qp 0x%06x UC RESET pd %u", fx.qp.qpn, fx.pdn);
}
END_TEST

START_TEST(test_port_and_capture)
{
	char dir[] = "/tmp/rocemu-status-XXXXXX", path[64], why[256];

	ck_assert_int_eq(rocemu_emu_set_port_state(&fx.emu, fx.dev, IBV_PORT_DOWN), 0);
	expect_line("device rocemu0 " FX_DEV_IP " " FX_DEV_MAC_TEXT " port DOWN mtu 4096");
	ck_assert_int_eq(rocemu_emu_set_port_state(&fx.emu, fx.dev, IBV_PORT_ACTIVE), 0);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/rocemu0.pcap", dir);
	ck_assert_int_eq(rocemu_capture_start(fx.dev, path, why, sizeof(why)), 0);
	expect_line("device rocemu0 " FX_DEV_IP " " FX_DEV_MAC_TEXT " port ACTIVE mtu 4096 capture %s", path);
	rocemu_capture_stop(fx.dev);
	expect_line("device rocemu0 " FX_DEV_IP " " FX_DEV_MAC_TEXT " port ACTIVE mtu 4096");
	/* a ConnectX-3 says so; a ConnectX-5, the default, does not */
	fx.dev->model = ROCEMU_MODEL_CX3;
	expect_line("device rocemu0 " FX_DEV_IP " " FX_DEV_MAC_TEXT " port ACTIVE mtu 4096 model cx3");
	fx.dev->model = ROCEMU_MODEL_CX5;
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* A configured MAC shows; a device with a VNI has its VXLAN line: remotes, MACs learned, counters. */
START_TEST(test_mac_and_vxlan)
{
	const uint8_t mac[6] = { 0x02, 0xab, 0xcd, 0xef, 0x01, 0x23 };
	struct rocemu_vxlan_port *v = &fx.dev->vxlan;

	ck_assert_ptr_null(strstr(status(), "  vxlan "));
	rocemu_device_set_mac(fx.dev, mac);
	expect_line("device rocemu0 " FX_DEV_IP " mac 02:ab:cd:ef:01:23 port ACTIVE mtu 4096");
	v->on = true;
	v->vni = 4242;
	expect_line("  vxlan vni 4242 port 4789 remotes none learned 0 tx 0 tx_dropped 0 rx 0 "
		    "rx_malformed 0 rx_other_vni 0 rx_looped 0");
	v->remotes[0] = inet_addr("198.18.0.2");
	v->remotes[1] = inet_addr("198.18.0.3");
	v->num_remotes = 2;
	rocemu_vxlan_fdb_learn(v, mac, v->remotes[1], rocemu_now_ns());
	v->counters = (struct rocemu_vxlan_counters){ .tx_frames = 1, .tx_dropped = 2,
						      .rx_frames = 3, .rx_malformed = 4,
						      .rx_other_vni = 5, .rx_looped = 6 };
	expect_line("  vxlan vni 4242 port 4789 remotes 198.18.0.2,198.18.0.3 learned 1 tx 1 "
		    "tx_dropped 2 rx 3 rx_malformed 4 rx_other_vni 5 rx_looped 6");
}
END_TEST

/* Each context has its block; the process holding them both has one line. */
START_TEST(test_two_contexts_one_process)
{
	char head[64];
	const char *p;
	unsigned int blocks = 0, processes = 0;

	fx_client_new();
	snprintf(head, sizeof(head), "client pid %d comm check_status device rocemu0\n",
		 (int)getpid());
	for (p = status(); (p = strstr(p, head)); p++)
		blocks++;
	ck_assert_uint_eq(blocks, 2);
	snprintf(head, sizeof(head), "process pid %d comm check_status fds ", (int)getpid());
	for (p = text; (p = strstr(p, head)); p++)
		processes++;
	ck_assert_uint_eq(processes, 1);
}
END_TEST

START_TEST(test_too_small)
{
	int n = rocemu_status_text(&fx.emu, text, sizeof(text));
	char small[64];

	ck_assert_int_gt(n, (int)sizeof(small));
	ck_assert_int_eq(rocemu_status_text(&fx.emu, small, sizeof(small)), -ENOSPC);
	/* Exactly its length with the NUL fits; one byte less does not. */
	ck_assert_int_eq(rocemu_status_text(&fx.emu, text, (size_t)n), n);
	ck_assert_int_eq(rocemu_status_text(&fx.emu, text, (size_t)n - 1), -ENOSPC);
}
END_TEST

static Suite *status_suite(void)
{
	Suite *s = suite_create("status");
	TCase *tc = tcase_create("text");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_daemon_and_device_lines);
	tcase_add_test(tc, test_context_objects);
	tcase_add_test(tc, test_qp_state_changes);
	tcase_add_test(tc, test_port_and_capture);
	tcase_add_test(tc, test_mac_and_vxlan);
	tcase_add_test(tc, test_two_contexts_one_process);
	tcase_add_test(tc, test_too_small);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(status_suite());
}
