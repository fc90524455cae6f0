/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A device's receive path: ICRC, BTH and the QP a datagram is for. */
#ifndef ROCEMU_EMULATOR_RX_H
#define ROCEMU_EMULATOR_RX_H

#include "emulator/core/device.h"
#include "net/loop/loop.h"

/* Check and hand one datagram received on dev to its QP's responder or completer. */
void rocemu_rx_datagram(struct rocemu_device *dev, const struct rocemu_dgram *d);
/* The same for a datagram sent to daddr (dev's address, or a multicast group it joined). */
void rocemu_rx_datagram_to(struct rocemu_device *dev, uint32_t daddr, const struct rocemu_dgram *d);

#endif /* ROCEMU_EMULATOR_RX_H */
