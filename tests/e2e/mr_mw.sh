#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The checks of tests/e2e/mr_mw.c (an MR stays while windows are bound to
# it, a window's rkey never reaches another MR, reregistered MRs work as
# fresh ones): requester and responder on two devices, then both on one.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MR_MW=$top_builddir/tests/e2e/mr_mw
require_built "$MR_MW"
use_test_net 70

# mr_mw_between DEV_A DEV_B
mr_mw_between() {
	# Our own program: leaks count here (rocemu run turns them off for distribution programs).
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$MR_MW" "$1" "$2" || fail "mr_mw $1 $2 failed"
	expect "^0 failed$" "$1 -> $2: every check passed ($(grep -c '^ok: ' "$OUT") checks)"
}

mr_mw() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	mr_mw_between rocemu0 rocemu1
	mr_mw_between rocemu0 rocemu0
	daemon_answers || fail "the daemon stopped answering"
	ok "the daemon still answers"
}

for_each_backend mr_mw
