#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Forged RoCEv2 packets against live RC QPs (tests/e2e/forged/rc_forged.c): READ
# responses that do not fit the READ in flight, stale and random ACKs and
# NAKs, duplicate READs on QPs that may not answer them. The daemon keeps
# answering `rocemu status`, the QPs stay in RTS and keep
# moving data, and the drop counters of `rocemu stats` move.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RC_FORGED=$top_builddir/tests/e2e/forged/rc_forged
require_built "$RC_FORGED"
use_test_net 60
# Bound on the host (not the default private wire of loopback devices): its forger sends to the devices from outside the daemon.
export ROCEMU_WIRE=host
[ "$(id -u)" -eq 0 ] || skip "needs root: the responder's packets are forged through a raw socket"

rc_forged() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 120 "$ROCEMU" run -- \
		"$RC_FORGED" rocemu0 rocemu1 "$ROCEMU" "$(addr 9)" || fail "rc_forged failed"
	expect_checks_passed
}

for_each_backend rc_forged
