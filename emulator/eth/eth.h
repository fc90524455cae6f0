/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The port's L2: a switch between the daemon's devices by destination
 * MAC (group frames to every other device, and to the wire between hosts
 * through emu->eth_wire_tx), and on arrival the device's flow steering
 * rules, which hand a frame to a RAW_PACKET QP or drop it.
 */
#ifndef ROCEMU_EMULATOR_ETH_H
#define ROCEMU_EMULATOR_ETH_H

#include <stdint.h>

struct rocemu_device;

/* A frame a RAW_PACKET QP of dev sends: to its sniffers, then by destination MAC. */
void rocemu_eth_tx(struct rocemu_device *dev, const uint8_t *frame, uint32_t len);
/* A frame arriving at dev's port (from the local switch or the wire): its steering rules. */
void rocemu_eth_rx(struct rocemu_device *dev, const uint8_t *frame, uint32_t len);

#endif /* ROCEMU_EMULATOR_ETH_H */
