/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The MACs a device's VXLAN wire learned, as Linux's vxlan learns them:
 * the source MAC of each frame that arrives, behind the VTEP it came
 * from. A frame for a learned MAC goes to that VTEP alone, any other to
 * every remote. The table is bounded (ROCEMU_VXLAN_FDB_SIZE, a few slots
 * probed per MAC, the oldest replaced) and entries age out as Linux's do.
 */
#ifndef ROCEMU_EMULATOR_VXLAN_FDB_H
#define ROCEMU_EMULATOR_VXLAN_FDB_H

#include <stdint.h>

#include "emulator/core/vxlan_port.h"

/* Linux vxlan's default ageing time. */
#define ROCEMU_VXLAN_FDB_AGE_NS (300ull * 1000000000ull)

/* mac was seen behind remote (IPv4, network order) at now_ns. */
void rocemu_vxlan_fdb_learn(struct rocemu_vxlan_port *v, const uint8_t mac[6], uint32_t remote,
			    uint64_t now_ns);
/* The remote mac was last seen behind, 0 when unknown or aged out. */
uint32_t rocemu_vxlan_fdb_lookup(const struct rocemu_vxlan_port *v, const uint8_t mac[6],
				 uint64_t now_ns);
/* Entries not aged out at now_ns. */
unsigned int rocemu_vxlan_fdb_live(const struct rocemu_vxlan_port *v, uint64_t now_ns);

#endif /* ROCEMU_EMULATOR_VXLAN_FDB_H */
