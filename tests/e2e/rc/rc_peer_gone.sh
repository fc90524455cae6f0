#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# RC towards QPs whose process was SIGKILLed while its control connection
# stayed open (tests/e2e/rc/rc_peer_gone.c): every operation ends with
# RETRY_EXC_ERR, as with a host that lost its process, never with a
# remote access or operational error; the objects go when the connection
# closes.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RC_PEER_GONE=$top_builddir/tests/e2e/rc/rc_peer_gone
require_built "$RC_PEER_GONE"
use_test_net 61

rc_peer_gone() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- \
		"$RC_PEER_GONE" rocemu0 rocemu1 "$ROCEMU" "$ROCEMU_RUNTIME_DIR/rocemud.log" ||
		fail "rc_peer_gone failed"
	expect_checks_passed
}

for_each_backend rc_peer_gone
