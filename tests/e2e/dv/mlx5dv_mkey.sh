#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Indirect mkeys laid out by UMR work requests (tests/e2e/dv/mlx5dv_mkey.c):
# MR_LIST and MR_INTERLEAVED keys through which remote WRITE and READ and
# local SEND, RECV, WRITE and READ land exactly where the layout says;
# access refused without the right, past the end, after invalidation or
# with an MR gone; mkey_configure; signature and crypto refused. Between
# two devices, then on one.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
MLX5DV_MKEY=$top_builddir/tests/e2e/dv/mlx5dv_mkey
require_built "$MLX5DV_MKEY"
use_test_net 132

# mlx5dv_mkey_between DEV_A DEV_B
mlx5dv_mkey_between() {
	run_checks_between "$MLX5DV_MKEY" "$1" "$2"
	expect "^ok: MR_LIST: remote WRITE of 3000 bytes through the rkey: every byte" "$1 -> $2: an MR_LIST key places a WRITE"
	expect "^ok: MR_INTERLEAVED: remote WRITE of 2600 bytes through the rkey: every byte" "$1 -> $2: an MR_INTERLEAVED key places a WRITE"
}

mlx5dv_mkey() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	mlx5dv_mkey_between rocemu0 rocemu1
	mlx5dv_mkey_between rocemu0 rocemu0
	daemon_answers || fail "the daemon stopped answering"
	ok "the daemon still answers"
}

for_each_backend mlx5dv_mkey
