/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The device list from ROCEMU_DEVICES: `name=ipv4[@model][/mtu][/key=value...],...`. */
#ifndef ROCEMU_EMULATOR_DEVICE_CONFIG_H
#define ROCEMU_EMULATOR_DEVICE_CONFIG_H

#include <stddef.h>

#include "emulator/core/device.h"

#define ROCEMU_DEFAULT_DEVICES "rocemu0=127.0.0.1"

/*
 * Parse spec (NULL or empty: the default) into devs (room for
 * ROCEMU_MAX_DEVICES) and *count. Returns 0, or -EINVAL with a one-line
 * explanation naming the faulty entry in err.
 */
int rocemu_devices_parse(const char *spec, struct rocemu_device *devs, unsigned int *count,
			 char *err, size_t errlen);

#endif /* ROCEMU_EMULATOR_DEVICE_CONFIG_H */
