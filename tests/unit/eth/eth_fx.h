/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The eth suites' fixture: an emulator of EFX_DEVS devices (no sockets,
 * no event loop run), a context on each with a PD and a CQ, and
 * RAW_PACKET QPs on a recording transport: every frame steering hands a
 * QP is kept, with its flow tag. Frames are built with
 * tests/unit/net/eth_build.h.
 */
#ifndef ROCEMU_TESTS_UNIT_ETH_FX_H
#define ROCEMU_TESTS_UNIT_ETH_FX_H

#include <stdint.h>
#include <check.h>
#include <infiniband/verbs.h>

#include "emulator/core/client.h"
#include "emulator/core/emu.h"
#include "net/eth/eth_frame.h"
#include "rocemu/ctrl.h"

struct rocemu_qp;

#define EFX_DEVS 3
#define EFX_RX_MAX 64
#define EFX_FRAME_MAX 256

/* A frame a QP received. */
struct efx_rx {
	uint32_t qpn;
	uint32_t tag;
	uint32_t len;
	uint8_t data[EFX_FRAME_MAX];
};

struct efx {
	struct rocemu_loop *loop;
	struct rocemu_emu emu;
	struct rocemu_client *client[EFX_DEVS];	/* a context on each device */
	uint32_t pdn[EFX_DEVS], cqn[EFX_DEVS];
	struct efx_rx rx[EFX_RX_MAX];
	unsigned int nrx;
	/* Called after a QP's frame is recorded (a test's transport that answers), or NULL. */
	void (*on_rx)(struct rocemu_qp *qp, const struct rocemu_eth_frame *f);
	/* Wire frames (emu.eth_wire_tx): how many, and the last's length. */
	unsigned int nwire;
	uint32_t wire_len;
};

extern struct efx efx;

void efx_setup(void);
void efx_teardown(void);
/* A RAW_PACKET QP of client c on dev's PD and CQ. */
uint32_t efx_qp(unsigned int dev);
/* The MAC of device dev. */
const uint8_t *efx_mac(unsigned int dev);

/* A rule request of type and priority to qpn with no specs yet; efx_spec adds one. */
void efx_flow_req(struct rocemu_create_flow_req *req, uint32_t qpn, enum ibv_flow_attr_type type,
		  uint16_t priority);
void efx_spec(struct rocemu_create_flow_req *req, const void *spec, uint16_t size);
/* ibv_create_flow on dev: the handle, asserted made. */
uint32_t efx_flow(unsigned int dev, const struct rocemu_create_flow_req *req);

/* Frames a QP received since the last count (and forget them). */
unsigned int efx_rx_of(uint32_t qpn);

/* A UDP/IPv4 frame from device src's MAC to dmac, ports sport -> dport, into buf (EFX_FRAME_MAX); its length. */
uint32_t efx_udp_frame(uint8_t *buf, const uint8_t *dmac, unsigned int src, uint16_t sport,
		       uint16_t dport);

int efx_suite_run(Suite *s);

#endif /* ROCEMU_TESTS_UNIT_ETH_FX_H */
