/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "tests/unit/eth/eth_fx.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emulator/ctrl/client_life.h"
#include "emulator/ctrl/emu_life.h"
#include "emulator/engine/transport.h"
#include "emulator/eth/flow.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"
#include "net/eth/eth_frame.h"
#include "tests/unit/net/eth_build.h"

struct efx efx;

static const char *const dev_ips[EFX_DEVS] = { "192.0.2.1", "192.0.2.2", "192.0.2.3" };

/* ---- the recording RAW_PACKET transport ---- */

static int raw_init(struct rocemu_qp *qp)
{
	return 0;
}

static void raw_nothing(struct rocemu_qp *qp)
{
}

static void raw_modified(struct rocemu_qp *qp, enum ibv_qp_state cur, enum ibv_qp_state next)
{
}

static void raw_timer(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind)
{
}

static bool raw_sq_draining(const struct rocemu_qp *qp)
{
	return false;
}

static void raw_rx_frame(struct rocemu_qp *qp, const struct rocemu_eth_frame *f, uint32_t tag)
{
	struct efx_rx *r;

	ck_assert_uint_lt(efx.nrx, EFX_RX_MAX);
	ck_assert_uint_le(f->len, EFX_FRAME_MAX);
	r = &efx.rx[efx.nrx++];
	r->qpn = qp->qpn;
	r->tag = tag;
	r->len = f->len;
	memcpy(r->data, f->data, f->len);
	if (efx.on_rx)
		efx.on_rx(qp, f);
}

static const struct rocemu_transport_ops raw_recording = {
	.name = "RAW_PACKET",
	.init = raw_init,
	.destroy = raw_nothing,
	.modified = raw_modified,
	.post = raw_nothing,
	.flush = raw_nothing,
	.timer = raw_timer,
	.sq_draining = raw_sq_draining,
	.rx_frame = raw_rx_frame,
};

static const struct rocemu_transport_ops *transport_of(enum ibv_qp_type type)
{
	return type == IBV_QPT_RAW_PACKET ? &raw_recording : rocemu_transport_of_qp_type(type);
}

static void wire_tx(struct rocemu_device *dev, const uint8_t *frame, uint32_t len)
{
	efx.nwire++;
	efx.wire_len = len;
}

/* ---- set up ---- */

static struct rocemu_client *client_open(unsigned int dev)
{
	struct rocemu_open_device_req req = { .pid = (uint32_t)getpid() };
	struct rocemu_open_device_resp resp;
	struct rocemu_client *c;
	int sv[2], fds[4], nfds = 0, i;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	c = rocemu_client_new(&efx.emu, sv[0], getpid(), getuid());
	ck_assert_ptr_nonnull(c);
	close(sv[1]);
	req.mem = (struct rocemu_mem_proof){ .self = (uintptr_t)&req, .uffd = -1, .guard_fd = -1 };
	memcpy(req.mem.nonce, &c, sizeof(c));
	ck_assert_int_eq(rocemu_client_open_device(c, dev, &req, sizeof(req), &req.mem, &resp, fds,
						   &nfds), 0);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	return c;
}

void efx_setup(void)
{
	struct rocemu_device devs[EFX_DEVS];
	struct rocemu_create_cq_req cq = { .cqe = 16, .channel = ROCEMU_NO_HANDLE };
	struct rocemu_cq_layout layout;
	char name[16];
	unsigned int i;
	int fd;

	memset(&efx, 0, sizeof(efx));
	efx.loop = rocemu_loop_new(ROCEMU_LOOP_EPOLL);
	ck_assert_ptr_nonnull(efx.loop);
	for (i = 0; i < EFX_DEVS; i++) {
		snprintf(name, sizeof(name), "rocemu%u", i);
		rocemu_device_init(&devs[i], i, name, inet_addr(dev_ips[i]),
				   ROCEMU_DEFAULT_NETDEV_MTU);
	}
	ck_assert_int_eq(rocemu_emu_setup(&efx.emu, efx.loop, devs, EFX_DEVS), 0);
	efx.emu.transport_of_qp_type = transport_of;
	efx.emu.eth_wire_tx = wire_tx;
	for (i = 0; i < EFX_DEVS; i++) {
		efx.client[i] = client_open(i);
		ck_assert_int_eq(rocemu_pd_alloc(efx.client[i], &efx.pdn[i]), 0);
		ck_assert_int_eq(rocemu_cq_create(efx.client[i], &cq, &layout, &fd), 0);
		close(fd);
		efx.cqn[i] = layout.cqn;
	}
}

void efx_teardown(void)
{
	rocemu_emu_fini(&efx.emu);
	rocemu_loop_free(efx.loop);
}

uint32_t efx_qp(unsigned int dev)
{
	struct rocemu_create_qp_req req = {
		.pdn = efx.pdn[dev], .qp_type = IBV_QPT_RAW_PACKET, .send_cqn = efx.cqn[dev],
		.recv_cqn = efx.cqn[dev], .srqn = ROCEMU_NO_HANDLE,
		.rwq_ind_tbl = ROCEMU_NO_HANDLE,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rocemu_create_qp_resp resp;
	int fd;

	ck_assert_int_eq(rocemu_qp_create(efx.client[dev], &req, &resp, &fd), 0);
	close(fd);
	return resp.layout.qpn;
}

const uint8_t *efx_mac(unsigned int dev)
{
	return efx.emu.devices[dev].mac;
}

void efx_flow_req(struct rocemu_create_flow_req *req, uint32_t qpn, enum ibv_flow_attr_type type,
		  uint16_t priority)
{
	memset(req, 0, sizeof(*req));
	req->qpn = qpn;
	req->type = type;
	req->priority = priority;
	req->port = 1;
}

void efx_spec(struct rocemu_create_flow_req *req, const void *spec, uint16_t size)
{
	ck_assert_uint_le(req->specs_len + size, sizeof(req->specs));
	memcpy(req->specs + req->specs_len, spec, size);
	req->specs_len += size;
	req->num_of_specs++;
}

uint32_t efx_flow(unsigned int dev, const struct rocemu_create_flow_req *req)
{
	uint32_t handle = 0;

	ck_assert_int_eq(rocemu_flow_create(efx.client[dev], req, &handle), 0);
	return handle;
}

unsigned int efx_rx_of(uint32_t qpn)
{
	unsigned int i, n = 0, kept = 0;

	for (i = 0; i < efx.nrx; i++) {
		if (efx.rx[i].qpn == qpn)
			n++;
		else
			efx.rx[kept++] = efx.rx[i];
	}
	efx.nrx = kept;
	return n;
}

uint32_t efx_udp_frame(uint8_t *buf, const uint8_t *dmac, unsigned int src, uint16_t sport,
		       uint16_t dport)
{
	const uint16_t payload = 18;
	size_t n;

	memset(buf, 0, EFX_FRAME_MAX);
	n = build_eth(buf, BUILD_NO_VLAN, 0x0800);
	memcpy(buf, dmac, ROCEMU_ETH_ALEN);
	memcpy(buf + ROCEMU_ETH_ALEN, efx_mac(src), ROCEMU_ETH_ALEN);
	n += build_ipv4(buf + n, 5, IPPROTO_UDP, 20 + 8 + payload, 1, 0, dev_ips[src], "198.51.100.9");
	n += build_udp(buf + n, sport, dport, 8 + payload);
	return (uint32_t)(n + payload);
}

int efx_suite_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
