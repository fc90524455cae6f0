/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Fault injection on a device's egress (ROCEMU_FAULTS, `rocemu fault`):
 * its injector (net/observe/fault.c) and the totals of the injectors it replaced.
 */
#ifndef ROCEMU_EMULATOR_FAULT_INJECT_H
#define ROCEMU_EMULATOR_FAULT_INJECT_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "net/observe/fault.h"

struct rocemu_device;

/*
 * Replace dev's fault configuration by spec ("" or "off": none). Returns 0,
 * or -EINVAL with the reason in err, -ENOMEM.
 */
int rocemu_fault_inject_set(struct rocemu_device *dev, const char *spec, char *err,
			    size_t errlen);

/*
 * Send the packet pkt[0, len) on socket fd to dst through dev's injector,
 * as a datagram of its own. Returns 0 or -errno.
 */
int rocemu_fault_inject_send(struct rocemu_device *dev, int fd, const struct sockaddr_in *dst,
			     const uint8_t *pkt, size_t len);

/* What dev's injectors, the live one and those it replaced, carried out. */
struct rocemu_fault_counters rocemu_fault_inject_totals(const struct rocemu_device *dev);

/* Stop injecting: held datagrams go out. */
void rocemu_fault_inject_stop(struct rocemu_device *dev);

#endif /* ROCEMU_EMULATOR_FAULT_INJECT_H */
