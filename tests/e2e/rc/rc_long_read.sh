#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A READ of 1 GiB under way (tests/e2e/rc/rc_long_read.c): the responder
# answers it a burst per turn of the loop, so `rocemu status` answers
# while it is under way and another QP pair keeps completing small WRITEs;
# the READ completes with its data. Forged by a fake peer, the READ is
# answered and another QP's WRITEs beside it are ACKed.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RC_LONG_READ=$top_builddir/tests/e2e/rc/rc_long_read
require_built "$RC_LONG_READ"
use_test_net 120
# Bound on the host (not the default private wire of loopback devices): a fake peer outside the daemon answers one of its devices.
export ROCEMU_WIRE=host

rc_long_read() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 120 "$ROCEMU" run -- \
		"$RC_LONG_READ" rocemu0 rocemu1 "$ROCEMU" "$(addr 9)" || fail "rc_long_read failed"
	expect_checks_passed
	expect "the READ of 1 GiB completes in" "$(grep -o 'the READ of 1 GiB completes in [0-9]* ms' "$OUT")"
}

for_each_backend rc_long_read
