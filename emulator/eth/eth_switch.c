/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The switch between the daemon's devices: a frame a port sends goes to
 * the port of its destination MAC, a group frame to every port, the
 * sender's own included (local loopback, which mlx5_ib enables for raw
 * packet users: a ConnectX steers its own frames too), and
 * what no local port owns, with every group frame, to the wire between
 * hosts. Ports that are down send and receive nothing. A frame sent while
 * one is being delivered (a delivery that sends) waits in a queue the
 * outermost call drains, so delivery never recurses.
 */
#include "emulator/eth/eth.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/core/device.h"
#include "emulator/core/emu.h"
#include "emulator/eth/flow_steer.h"
#include "emulator/observe/capture.h"
#include "net/observe/fault.h"
#include "rocemu/log.h"

/* Frames waiting while one is delivered; more are lost, as a switch's full buffer loses them. */
#define QUEUED_MAX 4096u

struct queued_frame {
	struct rocemu_list node;
	struct rocemu_device *dev;
	bool rx;			/* arriving at dev's port, else sent by it */
	uint32_t len;
	uint8_t data[];
};

static struct rocemu_list queued = { &queued, &queued };
static unsigned int nqueued;
static bool switching;

static void port_rx(struct rocemu_device *dev, const uint8_t *frame, uint32_t len)
{
	struct rocemu_eth_frame f;

	if (dev->port_state != IBV_PORT_ACTIVE || !rocemu_eth_parse(&f, frame, len)) {
		dev->rx_eth_dropped++;
		return;
	}
	dev->counters.port_rcv_packets++;
	dev->counters.port_rcv_data += len / ROCEMU_PORT_DATA_WORD;
	rocemu_capture_frame(dev, frame, len);
	if (dev->sniffers)
		rocemu_flow_sniff(dev, &f);
	if (!rocemu_flow_steer(dev, &f))
		dev->rx_eth_dropped++;
}

/* Every port up that frame is for: its destination MAC's, or all for a group frame. */
static bool switch_local(struct rocemu_device *from, const struct rocemu_eth_frame *f)
{
	struct rocemu_emu *emu = from->emu;
	bool group = rocemu_eth_mac_group(f->dmac), local = false;
	unsigned int i;

	for (i = 0; i < emu->num_devices; i++) {
		struct rocemu_device *to = &emu->devices[i];

		if (!group && memcmp(to->mac, f->dmac, ROCEMU_ETH_ALEN))
			continue;
		port_rx(to, f->data, f->len);
		local = true;
	}
	return local && !group;
}

static void switch_frame(struct rocemu_device *dev, const struct rocemu_eth_frame *f)
{
	if (!switch_local(dev, f) && dev->emu->eth_wire_tx)
		dev->emu->eth_wire_tx(dev, f->data, f->len);
}

/* The port's fault injector on a frame: dropped, sent twice, or sent with a bit flipped. */
static void port_tx_faulty(struct rocemu_device *dev, const struct rocemu_eth_frame *f)
{
	struct rocemu_fault_decision d;
	struct rocemu_eth_frame bad;
	uint8_t *copy;

	switch (rocemu_fault_decide(dev->fault, f->len, &d)) {
	case ROCEMU_FAULT_DROP:
		return;
	case ROCEMU_FAULT_DUPLICATE:
		switch_frame(dev, f);
		switch_frame(dev, f);
		return;
	case ROCEMU_FAULT_CORRUPT:
		copy = malloc(f->len);
		if (!copy)
			return;
		memcpy(copy, f->data, f->len);
		copy[d.corrupt_bit / 8 % f->len] ^= (uint8_t)(1u << d.corrupt_bit % 8);
		if (rocemu_eth_parse(&bad, copy, f->len))
			switch_frame(dev, &bad);
		free(copy);
		return;
	default:
		/* Reordering and delays hold datagrams on the UDP path only. */
		switch_frame(dev, f);
	}
}

static void port_tx(struct rocemu_device *dev, const uint8_t *frame, uint32_t len)
{
	struct rocemu_eth_frame f;

	if (dev->port_state != IBV_PORT_ACTIVE || !rocemu_eth_parse(&f, frame, len)) {
		dev->counters.port_xmit_discards++;
		return;
	}
	dev->counters.port_xmit_packets++;
	dev->counters.port_xmit_data += len / ROCEMU_PORT_DATA_WORD;
	/* Captured and sniffed as sent, before faults, as the RoCE path does. */
	rocemu_capture_frame(dev, frame, len);
	if (dev->sniffers)
		rocemu_flow_sniff(dev, &f);
	if (dev->fault)
		port_tx_faulty(dev, &f);
	else
		switch_frame(dev, &f);
}

static void frame_queue(struct rocemu_device *dev, const uint8_t *frame, uint32_t len, bool rx)
{
	struct queued_frame *q = nqueued < QUEUED_MAX ? malloc(sizeof(*q) + len) : NULL;

	if (!q) {
		if (rx)
			dev->rx_eth_dropped++;
		else
			dev->counters.port_xmit_discards++;
		return;
	}
	q->dev = dev;
	q->rx = rx;
	q->len = len;
	memcpy(q->data, frame, len);
	rocemu_list_add_tail(&queued, &q->node);
	nqueued++;
}

static void frame_switch(struct rocemu_device *dev, const uint8_t *frame, uint32_t len, bool rx)
{
	struct queued_frame *q;

	if (switching) {
		frame_queue(dev, frame, len, rx);
		return;
	}
	switching = true;
	(rx ? port_rx : port_tx)(dev, frame, len);
	while (!rocemu_list_empty(&queued)) {
		q = rocemu_container_of(queued.next, struct queued_frame, node);
		rocemu_list_del(&q->node);
		nqueued--;
		(q->rx ? port_rx : port_tx)(q->dev, q->data, q->len);
		free(q);
	}
	switching = false;
}

void rocemu_eth_tx(struct rocemu_device *dev, const uint8_t *frame, uint32_t len)
{
	frame_switch(dev, frame, len, false);
}

void rocemu_eth_rx(struct rocemu_device *dev, const uint8_t *frame, uint32_t len)
{
	frame_switch(dev, frame, len, true);
}
