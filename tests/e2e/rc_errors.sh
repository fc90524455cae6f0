#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The RC data path checks of tests/e2e/rc_errors.c (error completions,
# flushes, refused posts, SGE lists over several MRs, ibv_qp_ex): requester
# and responder on two devices, then both on one device.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RC_ERRORS=$top_builddir/tests/e2e/rc_errors
require_built "$RC_ERRORS"
use_test_net 22

# rc_errors_between DEV_A DEV_B
rc_errors_between() {
	# Our own program: leaks count here (rocemu run turns them off for distribution programs).
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$RC_ERRORS" "$1" "$2" || fail "rc_errors $1 $2 failed"
	expect "^0 failed$" "$1 -> $2: every check passed ($(grep -c '^ok: ' "$OUT") checks)"
}

rc_errors() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	rc_errors_between rocemu0 rocemu1
	rc_errors_between rocemu0 rocemu0
}

for_each_backend rc_errors
