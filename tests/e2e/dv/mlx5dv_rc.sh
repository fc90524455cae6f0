#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# RC through mlx5dv_init_obj and the mlx5 formats only (tests/e2e/dv/mlx5dv_rc.c):
# WQEs, doorbells, BlueFlame, receives in an RQ and an SRQ, and CQEs
# written and parsed by the program (data in the CQE included), between two
# devices and on one; the daemon's idle CPU before and after, and the
# doorbells that woke it from write-protected pages (rocemu stats'
# direct_wakeups) where the kernel lets the shim have a userfaultfd.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
MLX5DV_RC=$top_builddir/tests/e2e/dv/mlx5dv_rc
require_built "$MLX5DV_RC"
use_test_net 231

# direct_wakeups DEV: the doorbells that woke DEV's idle daemon by a fault, so far.
direct_wakeups() {
	run_with_timeout 10 "$ROCEMU" stats "$1" | awk '$2 == "direct_wakeups" { print $3 }'
}

# mlx5dv_rc_between DEV_A DEV_B [cqe128]
mlx5dv_rc_between() {
	local before after

	before=$(direct_wakeups "$1")
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$MLX5DV_RC" "$1" "$2" "$(daemon_pid)" ${3:+"$3"} ||
		fail "mlx5dv_rc $* failed"
	expect "^ok: WRITE with a bad rkey: error CQE" "$1 -> $2${3:+ $3}: a bad rkey gives the remote access syndrome"
	expect "^ok: inline SEND: 32 bytes in the CQE" "$1 -> $2${3:+ $3}: a small SEND's data comes in the CQE"
	expect "^ok: [0-9]+ SENDs through an SRQ of [0-9]+ WQEs posted by the program" \
		"$1 -> $2${3:+ $3}: receives the program posts in an SRQ"
	expect_checks_passed "$1 -> $2${3:+ $3}"
	if grep -q "^userfaultfd: doorbell pages write-protected" "$OUT"; then
		after=$(direct_wakeups "$1")
		[ "${after:-0}" -gt "${before:-0}" ] ||
			fail "$1 -> $2${3:+ $3}: no doorbell woke the idle daemon by a fault ($before, then $after)"
		ok "$1 -> $2${3:+ $3}: $((after - before)) doorbells woke the idle daemon by a fault"
	fi
	grep -E "^(ok: daemon idle|ok: 200 SEND|doorbell at|ok: small READ: [0-9]+ bytes|ok: [0-9]+ SENDs through an SRQ)" "$OUT"
}

mlx5dv_rc() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	mlx5dv_rc_between rocemu0 rocemu1
	mlx5dv_rc_between rocemu0 rocemu0
	mlx5dv_rc_between rocemu0 rocemu1 cqe128
}

for_each_backend mlx5dv_rc
