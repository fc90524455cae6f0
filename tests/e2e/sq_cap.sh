#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The send queue cap of the ring contract (tests/e2e/sq_cap.c): max_qp_wr,
# creates at and above 2^15 basic blocks, and a full queue at the cap.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SQ_CAP=$top_builddir/tests/e2e/sq_cap
require_built "$SQ_CAP"
use_test_net 90

sq_cap() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	# Our own program: leaks count here (rocemu run turns them off for distribution programs).
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 90 "$ROCEMU" run -- "$SQ_CAP" rocemu0 rocemu1 ||
		fail "sq_cap failed"
	expect "^ok: create 2-BB WQEs, max_qp_wr of them" "a send queue past 2^15 BBs is refused (EINVAL)"
	expect "^ok: every WRITE of the full queue" "a full send queue at the cap delivers every WRITE"
	expect "^0 failed$" "every check passed ($(grep -c '^ok: ' "$OUT") checks)"
}

for_each_backend sq_cap
