#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Scatter to CQE (tests/e2e/dv/mlx5dv_scatter.c): small SENDs, and READ and
# atomic replies where the QP allows it, come in the CQE as on a ConnectX,
# and ibv_poll_cq / ibv_start_poll put them where the WQE said; the
# create_flags and the environment that turn it off; packet-based credits.
# Between two devices, then on one.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
MLX5DV_SCATTER=$top_builddir/tests/e2e/dv/mlx5dv_scatter
require_built "$MLX5DV_SCATTER"
use_test_net 121

# mlx5dv_scatter_between DEV_A DEV_B
mlx5dv_scatter_between() {
	run_checks_between "$MLX5DV_SCATTER" "$1" "$2"
	expect "^ok: SEND of 32 bytes, ibv_start_poll: 32 bytes in the CQE \(op_own scatter bits 0x4" \
		"$1 -> $2: a 32-byte SEND in a 64-byte CQE"
	expect "^ok: SEND of 48 bytes: 48 bytes in the CQE \(op_own scatter bits 0x8" \
		"$1 -> $2: a 48-byte SEND in a 128-byte CQE"
	expect "^ok: READ of 24 bytes, ALLOW_SCATTER_TO_CQE: 24 bytes in the CQE" \
		"$1 -> $2: a small READ reply in the CQE when allowed"
	expect "^ok: READ of 24 bytes without ALLOW: 24 bytes in memory" \
		"$1 -> $2: a small READ reply in memory when not allowed"
}

mlx5dv_scatter() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	mlx5dv_scatter_between rocemu0 rocemu1
	mlx5dv_scatter_between rocemu1 rocemu1
}

for_each_backend mlx5dv_scatter
