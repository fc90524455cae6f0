#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The UD checks of tests/e2e/ud_uc/ud_ops.c (GRH bytes, AH from a completion,
# Q_Key rules, the MTU limit, ibv_qp_ex builders, receives through an SRQ)
# from rocemu0 to rocemu1; `rocemu stats` then counts exactly the one
# datagram with a wrong Q_Key and the two that found an SRQ empty.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
UD_OPS=$top_builddir/tests/e2e/ud_uc/ud_ops
require_built "$UD_OPS"
use_test_net 131

# stat DEV COUNTER: the counter's value in the last output of `rocemu stats`.
stat() {
	awk -v d="$1" -v c="$2" '$1 == d && $2 == c { print $3 }' "$OUT"
}

ud_ops() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	# Our own program: leaks count here (rocemu run turns them off for distribution programs).
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$UD_OPS" rocemu0 rocemu1 ||
		fail "ud_ops rocemu0 rocemu1 failed"
	expect_checks_passed
	capture 10 "$ROCEMU" stats || fail "rocemu stats"
	[ "$(stat rocemu1 rx_qkey_violations)" = 1 ] ||
		fail "rocemu1 rx_qkey_violations is $(stat rocemu1 rx_qkey_violations), not 1"
	[ "$(stat rocemu0 rx_qkey_violations)" = 0 ] ||
		fail "rocemu0 rx_qkey_violations is $(stat rocemu0 rx_qkey_violations), not 0"
	ok "the datagram with the wrong Q_Key is counted once, on its receiver"
	[ "$(stat rocemu1 out_of_buffer)" = 2 ] ||
		fail "rocemu1 out_of_buffer is $(stat rocemu1 out_of_buffer), not 2"
	[ "$(stat rocemu1 rx_ud_dropped)" = 0 ] ||
		fail "rocemu1 rx_ud_dropped is $(stat rocemu1 rx_ud_dropped), not 0"
	ok "the datagrams finding the SRQ empty are counted, one per SRQ check, as out_of_buffer"
}

for_each_backend ud_ops
