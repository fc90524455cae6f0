/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Steering a frame through a device's rules, as a ConnectX's NIC receive
 * tables: NORMAL rules by priority (lower first; at one priority a
 * DONT_TRAP rule before the others, the oldest matching rule taking the
 * frame and every rule of identical specs a copy), then, for a frame no
 * trapping rule took, every ALL_DEFAULT rule and, for a group frame,
 * every MC_DEFAULT rule. SNIFFER rules get a copy of everything the port
 * sends and receives, RoCE datagrams framed as the capture frames them.
 */
#ifndef ROCEMU_EMULATOR_FLOW_STEER_H
#define ROCEMU_EMULATOR_FLOW_STEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/eth/eth_frame.h"
#include "net/roce/ipv4.h"

struct rocemu_device;

/* Hand f, arriving at dev, to the QPs of its rules: whether a rule took it (a drop rule counts it dropped). */
bool rocemu_flow_steer(struct rocemu_device *dev, const struct rocemu_eth_frame *f);

/* A copy of f, sent or received by dev, to each of its sniffer rules. */
void rocemu_flow_sniff(struct rocemu_device *dev, const struct rocemu_eth_frame *f);

/* The same for RoCE datagrams buf[0, len) in seg-byte packets (0: one) along flow: emu->roce_sniff. */
void rocemu_flow_sniff_roce(struct rocemu_device *dev, const struct rocemu_ipv4_udp *flow,
			    const struct rocemu_ipv4_fields *ip, const uint8_t *buf, size_t len,
			    size_t seg);

#endif /* ROCEMU_EMULATOR_FLOW_STEER_H */
