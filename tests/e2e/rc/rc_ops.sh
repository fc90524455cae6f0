#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The RC operation checks of tests/e2e/rc/rc_ops.c (atomics, invalidation,
# memory windows, fences, ibv_qp_ex): requester and responder on two
# devices, then both on one device.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RC_OPS=$top_builddir/tests/e2e/rc/rc_ops
require_built "$RC_OPS"
use_test_net 42

rc_ops() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	run_checks_between "$RC_OPS" rocemu0 rocemu1
	run_checks_between "$RC_OPS" rocemu0 rocemu0
	# Atomic results under loss and duplicates: the responder's replay cache
	# answers resent atomics, so every fetch-and-add counts exactly once.
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	wait "$DAEMON_PID" 2>/dev/null || true
	ROCEMU_FAULTS="drop=0.05,dup=0.05,reorder=0.02,seed=11" ROCEMU_LOG=info start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 120 "$ROCEMU" run -- "$RC_OPS" rocemu0 rocemu1 atomics ||
		fail "rc_ops atomics under faults failed"
	expect_checks_passed "atomics under drop/dup/reorder"
}

for_each_backend rc_ops
