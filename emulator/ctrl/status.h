/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The text `rocemu status` prints: the daemon, its devices, and one block
 * per open context with its objects. Scripts grep it: keep the format.
 */
#ifndef ROCEMU_EMULATOR_STATUS_H
#define ROCEMU_EMULATOR_STATUS_H

#include <stddef.h>

#include "emulator/core/emu.h"

/* Write the NUL-terminated report to buf. Returns its length with the NUL, or -ENOSPC. */
int rocemu_status_text(struct rocemu_emu *emu, char *buf, size_t len);

#endif /* ROCEMU_EMULATOR_STATUS_H */
