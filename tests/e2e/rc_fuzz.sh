#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Fuzz of the packet path (tests/e2e/rc_fuzz.c): 100k mutated RoCEv2
# packets with correct ICRCs at live RC QPs moving real traffic. No byte
# outside the registered regions changes, the daemon neither crashes nor
# reports a sanitizer error, answers `rocemu status` after, and
# a fresh QP pair moves data.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RC_FUZZ=$top_builddir/tests/e2e/rc_fuzz
require_built "$RC_FUZZ"
use_test_net 62
PACKETS=100000
SEED=1

rc_fuzz() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 240 "$ROCEMU" run -- \
		"$RC_FUZZ" rocemu0 rocemu1 "$ROCEMU" "$PACKETS" "$SEED" || fail "rc_fuzz failed"
	expect_checks_passed
	expect "^ok: [0-9]+ fuzz packets reached the daemon" "$(grep -Eo '[0-9]+ fuzz packets reached the daemon' "$OUT")"
	kill -0 "$DAEMON_PID" 2>/dev/null || fail "rocemud is gone"
	! grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error' "$ROCEMU_RUNTIME_DIR/rocemud.log" ||
		fail "the daemon reports a sanitizer error"
	ok "rocemud runs, no sanitizer report"
}

for_each_backend rc_fuzz
