/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The mlx4 ring format as a table (ring/format.h): what a device that
 * emulates a ConnectX-3 Pro points at.
 */
#ifndef ROCEMU_EMULATOR_MLX4_FORMAT_H
#define ROCEMU_EMULATOR_MLX4_FORMAT_H

#include "emulator/ring/format.h"

extern const struct rocemu_ring_format rocemu_ring_mlx4;

#endif /* ROCEMU_EMULATOR_MLX4_FORMAT_H */
