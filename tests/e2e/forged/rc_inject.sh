#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Another local user forging a SEND and a WRITE at a connection between two
# devices of one daemon, from the sending device's address and with the
# PSNs and rkey the receiver expects (tests/e2e/forged/rc_inject.c): nothing lands,
# the forgeries are counted, the real messages then land whole.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RC_INJECT=$top_builddir/tests/e2e/forged/rc_inject
require_built "$RC_INJECT"
use_test_net 37
# Bound on the host (not the default private wire of loopback devices): the forger sends to the devices from outside the daemon, as on a host where they are reachable.
export ROCEMU_WIRE=host
[ "$(id -u)" -eq 0 ] || skip "needs root: the forger runs as user nobody"

rc_inject() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- \
		"$RC_INJECT" rocemu0 rocemu1 "$ROCEMU" "$(addr 9)" || fail "rc_inject failed"
	expect_checks_passed
}

for_each_backend rc_inject
