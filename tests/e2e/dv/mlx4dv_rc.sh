#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# RC through mlx4dv_init_obj and the mlx4 formats only (tests/e2e/dv/mlx4dv_rc.c)
# on ConnectX-3 devices: WQEs, the send doorbell (through sdb and through
# the UAR page mapped from cmd_fd) and BlueFlame copies, receives in an RQ
# and an SRQ, and CQEs written and parsed by the program, between two
# devices and on one.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
MLX4DV_RC=$top_builddir/tests/e2e/dv/mlx4dv_rc
require_built "$MLX4DV_RC"
use_test_net 337

# mlx4dv_rc_between DEV_A DEV_B
mlx4dv_rc_between() {
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$MLX4DV_RC" "$1" "$2" ||
		fail "mlx4dv_rc $1 $2 failed"
	expect "^ok: WRITE with a bad rkey: error CQE, syndrome 0x13" "$1 -> $2: a bad rkey gives the remote access syndrome"
	expect "^ok: [0-9]+ SENDs: SQ went round [3-9]" "$1 -> $2: the SQ and the CQs wrap"
	expect "^ok: [0-9]+ SENDs through an SRQ of [0-9]+ WQEs posted by the program" \
		"$1 -> $2: receives the program posts in an SRQ"
	expect "^ok: mlx4dv_create_qp with inl_recv_sz" "$1 -> $2: mlx4dv_create_qp grants an inline receive size"
	expect "^ok: cmd_fd's UAR page is the page of sdb" "$1 -> $2: cmd_fd maps the QP's UAR page"
	expect "^ok: the requester rang [1-9][0-9]* doorbells through cmd_fd's UAR and [1-9][0-9]* BlueFlame" \
		"$1 -> $2: doorbells through the UAR and BlueFlame pages"
	expect_checks_passed "$1 -> $2"
}

mlx4dv_rc() {
	ROCEMU_DEVICES="mlx4_0=$(addr 1)@cx3,mlx4_1=$(addr 2)@cx3"
	export ROCEMU_DEVICES
	start_daemon
	mlx4dv_rc_between mlx4_0 mlx4_1
	mlx4dv_rc_between mlx4_0 mlx4_0
}

for_each_backend mlx4dv_rc
