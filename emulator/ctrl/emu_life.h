/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The emulator brought up and taken down (emu.h): its handle tables, the
 * loop's idle hook, every device's UDP port and ibdev_path files, and the
 * state of a device's port as `rocemu port` sets it.
 */
#ifndef ROCEMU_EMULATOR_EMU_LIFE_H
#define ROCEMU_EMULATOR_EMU_LIFE_H

#include <stddef.h>
#include <infiniband/verbs.h>

#include "emulator/core/emu.h"

/*
 * Set up emu for devs (copied) on loop with its tables and doorbell scan,
 * but off the network: no port open, no file written. Returns 0 or
 * -ENOMEM. A unit test puts its devices on a fake wire (device.h) then.
 */
int rocemu_emu_setup(struct rocemu_emu *emu, struct rocemu_loop *loop,
		     const struct rocemu_device *devs, unsigned int num_devs);
/*
 * rocemu_emu_setup, then create the ibdev_path files, open every device's
 * UDP port and register it with loop. On failure returns -errno and a
 * one-line reason in err; nothing stays open.
 */
int rocemu_emu_init(struct rocemu_emu *emu, struct rocemu_loop *loop, const char *runtime_dir,
		    const struct rocemu_device *devs, unsigned int num_devs,
		    char *err, size_t errlen);
/* Destroy every client and its objects, close ports, remove the ibdev_path files. */
void rocemu_emu_fini(struct rocemu_emu *emu);

/*
 * Change a device's port state (IBV_PORT_ACTIVE or IBV_PORT_DOWN) and tell
 * every context open on it (IBV_EVENT_PORT_ACTIVE / IBV_EVENT_PORT_ERR).
 * Returns 0, -EINVAL for another state.
 */
int rocemu_emu_set_port_state(struct rocemu_emu *emu, struct rocemu_device *dev,
			      enum ibv_port_state state);

#endif /* ROCEMU_EMULATOR_EMU_LIFE_H */
