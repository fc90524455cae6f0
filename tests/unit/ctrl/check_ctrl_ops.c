/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The control ops' table and checks (emulator/ctrl/ctrl_ops.c) through
 * rocemu_ctrl_dispatch, as the control server calls it: object ops before
 * OPEN_DEVICE refused with EINVAL, the response size preset from the
 * protocol's table and cleared (with its fds) on an error, and what each
 * op that takes names or paths refuses itself: no such device (ENODEV), a
 * port other than 1, a relative capture path, stopping a capture that
 * does not run (ENODATA), an rdma_cm connection asking for a device
 * (EBUSY); HELLO, STATUS pages and SHUTDOWN.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emulator/ctrl/client_life.h"
#include "emulator/ctrl/ctrl_ops.h"
#include "emulator/ctrl/status.h"
#include "emulator/observe/capture.h"
#include "tests/unit/fixture.h"

/* Response bodies, as the server's buffer: ROCEMU_CTRL_MSG_MAX bytes, aligned for any struct. */
static union {
	uint64_t align;
	uint8_t bytes[ROCEMU_CTRL_MSG_MAX];
} body;
static struct rocemu_ctrl_reply reply;

/*
 * Run op with req for c as the server does; the reply is left in reply and
 * body. The server reads the length and fds of a reply only on success.
 */
static int dispatch(struct rocemu_client *c, uint16_t op, const void *req)
{
	const struct rocemu_msg_hdr hdr = { .op = op, .len = rocemu_ctrl_body_size[op][0] };

	memset(&reply, 0, sizeof(reply));
	/* Garbage where the op must write: an error must leave neither length nor fds. */
	reply.body = body.bytes;
	reply.len = 0xdead;
	reply.nfds = 3;
	return rocemu_ctrl_dispatch(c, &hdr, req, &reply);
}

/* An op whose handler refuses: the reply it began is dropped, fds and all. */
static int dispatch_err(struct rocemu_client *c, uint16_t op, const void *req)
{
	int err = dispatch(c, op, req);

	if (err) {
		ck_assert_uint_eq(reply.len, 0);
		ck_assert_int_eq(reply.nfds, 0);
	}
	return err;
}

/* A connection that has not opened a device yet. */
static struct rocemu_client *bare_client(void)
{
	struct rocemu_client *c;
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	c = rocemu_client_new(&fx.emu, sv[0], getpid(), getuid());
	ck_assert_ptr_nonnull(c);
	close(sv[1]);
	return c;
}

START_TEST(test_object_ops_need_a_context)
{
	struct rocemu_client *c = bare_client();
	const struct rocemu_handle_req handle = { .handle = fx.pdn };
	const struct rocemu_query_port_req port = { .port_num = ROCEMU_PORT_NUM };
	const struct rocemu_create_cq_req cq = { .cqe = 4, .channel = ROCEMU_NO_HANDLE };

	ck_assert_int_eq(dispatch_err(c, ROCEMU_OP_QUERY_DEVICE, NULL), -EINVAL);
	ck_assert_int_eq(dispatch_err(c, ROCEMU_OP_QUERY_PORT, &port), -EINVAL);
	ck_assert_int_eq(dispatch_err(c, ROCEMU_OP_ALLOC_PD, NULL), -EINVAL);
	ck_assert_int_eq(dispatch_err(c, ROCEMU_OP_DEALLOC_PD, &handle), -EINVAL);
	ck_assert_int_eq(dispatch_err(c, ROCEMU_OP_CREATE_CQ, &cq), -EINVAL);
	/* The PD of another context was not touched by the refused DEALLOC_PD. */
	ck_assert_int_eq(dispatch(fx.client, ROCEMU_OP_DEALLOC_PD, &handle), -EBUSY);
	/* Op 0 is no op: nothing to run. */
	ck_assert_int_eq(dispatch_err(c, 0, NULL), -EOPNOTSUPP);
	/* Refused before any handler ran: the client made nothing. */
	ck_assert(rocemu_list_empty(&c->cqs));
	ck_assert_ptr_null(c->ufile);
}
END_TEST

START_TEST(test_hello_without_context)
{
	const struct rocemu_hello_resp *resp = (const void *)body.bytes;
	const struct rocemu_hello_req req = { 0 };
	struct rocemu_client *c = bare_client();

	ck_assert_int_eq(dispatch(c, ROCEMU_OP_HELLO, &req), 0);
	ck_assert_uint_eq(reply.len, sizeof(struct rocemu_hello_resp));
	ck_assert_int_eq(reply.nfds, 0);
	ck_assert_uint_eq(resp->daemon_pid, (uint32_t)getpid());
	ck_assert_uint_eq(resp->num_devices, 1);
	ck_assert_str_eq(resp->devices[0].name, "rocemu0");
	ck_assert_uint_eq(resp->devices[0].ipv4, fx.dev->ipv4);
	ck_assert_uint_eq(resp->devices[0].port_state, IBV_PORT_ACTIVE);
	/* The fixture sets up no sysfs root: the field is empty, not garbage. */
	ck_assert_str_eq(resp->ibdev_root, "");
}
END_TEST

START_TEST(test_query_port)
{
	const struct rocemu_query_port_resp *resp = (const void *)body.bytes;
	struct rocemu_query_port_req req = { .port_num = ROCEMU_PORT_NUM };

	ck_assert_int_eq(dispatch(fx.client, ROCEMU_OP_QUERY_PORT, &req), 0);
	ck_assert_uint_eq(reply.len, sizeof(struct rocemu_query_port_resp));
	ck_assert_int_eq(resp->attr.state, IBV_PORT_ACTIVE);
	ck_assert_int_eq(resp->attr.active_mtu, IBV_MTU_4096);
	req.port_num = 2;
	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_QUERY_PORT, &req), -EINVAL);
	req.port_num = 0;
	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_QUERY_PORT, &req), -EINVAL);
}
END_TEST

/* Requests naming a device: a name not NUL-terminated in its field is still only that name. */
START_TEST(test_set_port_state)
{
	struct rocemu_set_port_state_req req = { .dev_name = "rocemu1",
						 .port_state = IBV_PORT_DOWN };
	struct rocemu_async_record ev;
	struct rocemu_client *c = bare_client();

	ck_assert_int_eq(dispatch_err(c, ROCEMU_OP_SET_PORT_STATE, &req), -ENODEV);
	memset(req.dev_name, 'r', sizeof(req.dev_name));
	ck_assert_int_eq(dispatch_err(c, ROCEMU_OP_SET_PORT_STATE, &req), -ENODEV);
	snprintf(req.dev_name, sizeof(req.dev_name), "rocemu0");
	req.port_state = IBV_PORT_INIT;
	ck_assert_int_eq(dispatch_err(c, ROCEMU_OP_SET_PORT_STATE, &req), -EINVAL);
	ck_assert_int_eq(fx.dev->port_state, IBV_PORT_ACTIVE);
	/* Allowed without a context of its own (rocemu port): the contexts on it hear of it. */
	req.port_state = IBV_PORT_DOWN;
	ck_assert_int_eq(dispatch(c, ROCEMU_OP_SET_PORT_STATE, &req), 0);
	ck_assert_uint_eq(reply.len, 0);
	ck_assert_int_eq(fx.dev->port_state, IBV_PORT_DOWN);
	ck_assert(fx_async_event(&ev));
	ck_assert_uint_eq(ev.event_type, IBV_EVENT_PORT_ERR);
	ck_assert_uint_eq(ev.element, ROCEMU_PORT_NUM);
}
END_TEST

START_TEST(test_set_faults)
{
	struct rocemu_set_faults_req req = { .dev_name = "nodev", .spec = "drop=0.5" };

	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_SET_FAULTS, &req), -ENODEV);
	snprintf(req.dev_name, sizeof(req.dev_name), "rocemu0");
	snprintf(req.spec, sizeof(req.spec), "drop=2");
	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_SET_FAULTS, &req), -EINVAL);
	snprintf(req.spec, sizeof(req.spec), "nonsense=1");
	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_SET_FAULTS, &req), -EINVAL);
	ck_assert_ptr_null(fx.dev->fault);
	snprintf(req.spec, sizeof(req.spec), "drop=0.5,seed=3");
	ck_assert_int_eq(dispatch(fx.client, ROCEMU_OP_SET_FAULTS, &req), 0);
	ck_assert_ptr_nonnull(fx.dev->fault);
	ck_assert(rocemu_fault_config(fx.dev->fault)->drop == 0.5);
	/* "" clears, as `rocemu fault DEV off` does. */
	req.spec[0] = '\0';
	ck_assert_int_eq(dispatch(fx.client, ROCEMU_OP_SET_FAULTS, &req), 0);
	ck_assert_ptr_null(fx.dev->fault);
}
END_TEST

START_TEST(test_set_capture)
{
	struct rocemu_set_capture_req req = { .dev_name = "nodev", .path = "/tmp/x.pcap" };
	char dir[] = "/tmp/rocemu-ctrl-ops-XXXXXX";

	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_SET_CAPTURE, &req), -ENODEV);
	snprintf(req.dev_name, sizeof(req.dev_name), "rocemu0");
	/* The daemon's working directory is no business of the CLI's. */
	snprintf(req.path, sizeof(req.path), "x.pcap");
	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_SET_CAPTURE, &req), -EINVAL);
	req.path[0] = '\0';
	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_SET_CAPTURE, &req), -ENODATA);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(req.path, sizeof(req.path), "%s/missing/x.pcap", dir);
	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_SET_CAPTURE, &req), -ENOENT);
	snprintf(req.path, sizeof(req.path), "%s/x.pcap", dir);
	ck_assert_int_eq(dispatch(fx.client, ROCEMU_OP_SET_CAPTURE, &req), 0);
	ck_assert_str_eq(rocemu_capture_path(fx.dev), req.path);
	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_SET_CAPTURE, &req), -EBUSY);
	req.path[0] = '\0';
	ck_assert_int_eq(dispatch(fx.client, ROCEMU_OP_SET_CAPTURE, &req), 0);
	ck_assert_ptr_null(rocemu_capture_path(fx.dev));
	snprintf(req.path, sizeof(req.path), "%s/x.pcap", dir);
	ck_assert_int_eq(unlink(req.path), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_trace)
{
	struct rocemu_trace_req req = { .dev_name = "nodev", .qpn = ROCEMU_TRACE_ANY_QP,
					.kinds = ROCEMU_TRACE_ALL };

	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_TRACE, &req), -ENODEV);
	req.dev_name[0] = '\0';
	req.kinds = 0;
	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_TRACE, &req), -EINVAL);
	req.kinds = ROCEMU_TRACE_ALL + 1;
	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_TRACE, &req), -EINVAL);
	ck_assert_uint_eq(fx.emu.ntracers, 0);
	req.kinds = ROCEMU_TRACE_PACKET;
	ck_assert_int_eq(dispatch(fx.client, ROCEMU_OP_TRACE, &req), 0);
	ck_assert_int_eq(reply.nfds, 1);
	ck_assert_int_ge(reply.fds[0], 0);
	ck_assert_uint_eq(fx.emu.ntracers, 1);
	close(reply.fds[0]);
}
END_TEST

/* A connection that opened the rdma_cm file is that file: it opens no device. */
START_TEST(test_rdma_cm_connection_opens_no_device)
{
	const struct rocemu_ucma_open_resp *resp = (const void *)body.bytes;
	struct rocemu_open_device_req req = { .pid = (uint32_t)getpid() };
	struct rocemu_client *c = bare_client();

	ck_assert_int_eq(dispatch(c, ROCEMU_OP_UCMA_OPEN, NULL), 0);
	ck_assert_int_eq(reply.nfds, 1);
	ck_assert_uint_eq(reply.len, sizeof(*resp));
	close(reply.fds[0]);
	req.mem = (struct rocemu_mem_proof){ .self = (uintptr_t)&req, .uffd = -1, .guard_fd = -1 };
	ck_assert_int_eq(dispatch_err(c, ROCEMU_OP_OPEN_DEVICE, &req), -EBUSY);
	ck_assert_ptr_null(c->dev);
}
END_TEST

/* STATUS serves the status text in pages; a later page needs the snapshot of the first. */
START_TEST(test_status_pages)
{
	const struct rocemu_text_resp *resp = (const void *)body.bytes;
	struct rocemu_text_req req = { .offset = 0 };
	static char expect[ROCEMU_CTRL_MSG_MAX];
	struct rocemu_client *c = bare_client();
	int n;

	ck_assert_int_eq(dispatch_err(c, ROCEMU_OP_STATUS, &(struct rocemu_text_req){ .offset = 1 }),
			 -EINVAL);
	ck_assert_int_eq(dispatch(c, ROCEMU_OP_STATUS, &req), 0);
	n = rocemu_status_text(&fx.emu, expect, sizeof(expect));
	ck_assert_int_gt(n, 1);
	/* The whole report in one page: its text without the NUL. */
	ck_assert_uint_eq(resp->total, (uint64_t)n - 1);
	ck_assert_uint_eq(reply.len, sizeof(*resp) + (uint32_t)n - 1);
	ck_assert_int_eq(memcmp(resp->text, expect, (size_t)n - 1), 0);
	/* The last page read, the snapshot is gone. */
	req.offset = 1;
	ck_assert_int_eq(dispatch_err(c, ROCEMU_OP_STATUS, &req), -EINVAL);
	/* STATS pages are of their own report. */
	req.offset = 0;
	ck_assert_int_eq(dispatch(c, ROCEMU_OP_STATS, &req), 0);
	ck_assert_ptr_nonnull(strstr(resp->text, "rocemu0 port_xmit_packets 0\n"));
}
END_TEST

START_TEST(test_shutdown)
{
	struct rocemu_client *c = bare_client();

	ck_assert(!fx.emu.stop_requested);
	ck_assert_int_eq(dispatch(c, ROCEMU_OP_SHUTDOWN, NULL), 0);
	ck_assert(fx.emu.stop_requested);
}
END_TEST

/* Ops on numbers the client does not own: EINVAL, as for the kernel's unknown handles. */
START_TEST(test_unknown_handles)
{
	const struct rocemu_dci_stream_reset_req dci = { .qpn = 0xfffff0 };
	struct rocemu_direct_doorbells_req direct = { .kind = ROCEMU_DIRECT_QP,
						      .handle = 0xfffff0 };

	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_DCI_STREAM_RESET, &dci), -EINVAL);
	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_DIRECT_DOORBELLS, &direct), -EINVAL);
	direct.kind = 7;
	direct.handle = fx.qp.qpn;
	ck_assert_int_eq(dispatch_err(fx.client, ROCEMU_OP_DIRECT_DOORBELLS, &direct), -EINVAL);
}
END_TEST

/* A successful op with fds: the table's size and the fd it made. */
START_TEST(test_reply_size_and_fds)
{
	const struct rocemu_create_comp_channel_resp *resp = (const void *)body.bytes;

	ck_assert_int_eq(dispatch(fx.client, ROCEMU_OP_CREATE_COMP_CHANNEL, NULL), 0);
	ck_assert_uint_eq(reply.len, sizeof(*resp));
	ck_assert_int_eq(reply.nfds, 1);
	close(reply.fds[0]);
	ck_assert_int_eq(dispatch(fx.client, ROCEMU_OP_DESTROY_COMP_CHANNEL,
				  &(struct rocemu_handle_req){ .handle = resp->handle }), 0);
	ck_assert_uint_eq(reply.len, 0);
	ck_assert_int_eq(reply.nfds, 0);
}
END_TEST

static Suite *ctrl_ops_suite(void)
{
	Suite *s = suite_create("ctrl_ops");
	TCase *tc = tcase_create("dispatch");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_object_ops_need_a_context);
	tcase_add_test(tc, test_hello_without_context);
	tcase_add_test(tc, test_query_port);
	tcase_add_test(tc, test_set_port_state);
	tcase_add_test(tc, test_set_faults);
	tcase_add_test(tc, test_set_capture);
	tcase_add_test(tc, test_trace);
	tcase_add_test(tc, test_rdma_cm_connection_opens_no_device);
	tcase_add_test(tc, test_status_pages);
	tcase_add_test(tc, test_shutdown);
	tcase_add_test(tc, test_unknown_handles);
	tcase_add_test(tc, test_reply_size_and_fds);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(ctrl_ops_suite());
}
