#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Completion timestamps (tests/e2e/dv/mlx5dv_timestamps.c): the device clock of
# the verbs and mlx5dv queries, and timestamps of CQs of ibv_create_cq_ex and
# mlx5dv_create_cq that never go back and convert to ns within the wall-clock
# interval of each operation; then unmodified ibv_rc_pingpong -t.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
MLX5DV_TIMESTAMPS=$top_builddir/tests/e2e/dv/mlx5dv_timestamps
require_built "$MLX5DV_TIMESTAMPS"
require_programs ibv_rc_pingpong ss
use_test_net 101

# stamps_between DEV_A DEV_B
stamps_between() {
	run_checks_between "$MLX5DV_TIMESTAMPS" "$1" "$2"
	grep -E "^(ok: ibv_query_device_ex|message)" "$OUT"
}

mlx5dv_timestamps() {
	local what

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	stamps_between rocemu0 rocemu1
	stamps_between rocemu0 rocemu0
	what="ibv_rc_pingpong -t"
	next_port
	run_pair "$what" 30 \
		ibv_rc_pingpong -d rocemu0 -g 0 -t -p "$PAIR_PORT" -n 50 \
		--client \
		ibv_rc_pingpong -d rocemu1 -g 0 -t -p "$PAIR_PORT" -n 50 127.0.0.1
	expect_both "^50 iters in " "$what: all iterations"
	expect_both "^Min receive completion clock cycles = [1-9][0-9]*$" "$what: receive timestamps advance"
	expect_neither "isn't completion timestamp capable" "$what: the device has timestamps"
	grep -h "completion clock cycles" "$SERVER_OUT" "$CLIENT_OUT"
}

for_each_backend mlx5dv_timestamps
