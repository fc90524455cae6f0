/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/core/emu.h"

#include <string.h>

struct rocemu_device *rocemu_emu_device_by_name(struct rocemu_emu *emu, const char *name)
{
	unsigned int i;

	for (i = 0; i < emu->num_devices; i++)
		if (!strncmp(emu->devices[i].name, name, ROCEMU_DEV_NAME_MAX))
			return &emu->devices[i];
	return NULL;
}

struct rocemu_device *rocemu_emu_device_by_ipv4(struct rocemu_emu *emu, uint32_t addr)
{
	unsigned int i;

	for (i = 0; i < emu->num_devices; i++)
		if (emu->devices[i].ipv4 == addr)
			return &emu->devices[i];
	return NULL;
}
