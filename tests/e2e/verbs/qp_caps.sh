#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The queue sizes of the ring contract (tests/e2e/verbs/qp_caps.c): max_qp_wr,
# creates at and above 2^15 send queue basic blocks, a full queue at the
# cap, and a receive into as many SGEs as the create granted.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
QP_CAPS=$top_builddir/tests/e2e/verbs/qp_caps
require_built "$QP_CAPS"
use_test_net 90

qp_caps() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	# Our own program: leaks count here (rocemu run turns them off for distribution programs).
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 90 "$ROCEMU" run -- "$QP_CAPS" rocemu0 rocemu1 ||
		fail "qp_caps failed"
	expect "^ok: create 2-BB WQEs, max_qp_wr of them" "a send queue past 2^15 BBs is refused (EINVAL)"
	expect "^ok: every WRITE of the full queue" "a full send queue at the cap delivers every WRITE"
	expect "^ok: every receive SGE" "a message fills every receive SGE granted"
	expect_checks_passed
}

for_each_backend qp_caps
