/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The mlx5 ring format as a table (ring/format.h): what a device that
 * emulates a ConnectX-4 or later points at.
 */
#ifndef ROCEMU_EMULATOR_MLX5_FORMAT_H
#define ROCEMU_EMULATOR_MLX5_FORMAT_H

#include "emulator/ring/format.h"

extern const struct rocemu_ring_format rocemu_ring_mlx5;

#endif /* ROCEMU_EMULATOR_MLX5_FORMAT_H */
