/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The L2 wire between hosts as VXLAN (RFC 7348): a device configured with
 * a VNI sends the frames its switch hands to the wire (emu->eth_wire_tx)
 * in UDP datagrams to port 4789 of the VTEP learned for the destination
 * MAC, or of every remote, and hands the frames arriving on its own
 * <address>:4789 with its VNI to its port (rocemu_eth_rx). RoCEv2 stays
 * on 4791. What arrives is untrusted: anything else is dropped and counted.
 */
#ifndef ROCEMU_EMULATOR_VXLAN_WIRE_H
#define ROCEMU_EMULATOR_VXLAN_WIRE_H

#include <stddef.h>
#include <stdint.h>

struct rocemu_device;

/*
 * Open dev's VXLAN sockets when it has a VNI (nothing to do otherwise) and
 * receive on them through its loop. Returns 0, or -errno with a line in err.
 */
int rocemu_vxlan_open(struct rocemu_device *dev, char *err, size_t errlen);
/* Close them (safe on a device whose sockets never opened). */
void rocemu_vxlan_close(struct rocemu_device *dev);

/* emu->eth_wire_tx: frame[0, len) of dev onto its VXLAN wire (no VNI: nowhere). */
void rocemu_vxlan_wire_tx(struct rocemu_device *dev, const uint8_t *frame, uint32_t len);

/* A datagram to dev's port 4789 from the VTEP at src (IPv4, network order). */
void rocemu_vxlan_rx(struct rocemu_device *dev, const uint8_t *data, size_t len, uint32_t src);

#endif /* ROCEMU_EMULATOR_VXLAN_WIRE_H */
