#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified ib_atomic_bw and ib_atomic_lat, FETCH_AND_ADD and CMP_AND_SWAP,
# server on rocemu0 and client on rocemu1 as two processes: short runs that
# must finish with their report on both sides.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ib_atomic_bw ib_atomic_lat ss
use_test_net 41

ITERS=200

# atomic_test TOOL OP: one run of TOOL with atomics of kind OP.
atomic_test() {
	local tool=$1 op=$2 what

	what="$tool -A $op -n $ITERS"
	perftest_clock "$tool"
	next_port
	run_pair "$what" 30 \
		"$tool" -d rocemu0 -x 0 "${PERFTEST_CLOCK[@]}" -p "$PAIR_PORT" -A "$op" -n "$ITERS" \
		--client \
		"$tool" -d rocemu1 -x 0 "${PERFTEST_CLOCK[@]}" -p "$PAIR_PORT" -A "$op" -n "$ITERS" 127.0.0.1
	expect_both "local address: " "$what: local QP printed"
	expect_both "remote address: " "$what: peer's QP received"
	expect_client "^ *#bytes +#iterations " "$what: report header"
	expect_client "^ *8 +$ITERS +[0-9]+\.[0-9]+" "$what: report line"
	expect_both "^-{40,}$" "$what: report closed"
}

atomic_tests() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	atomic_test ib_atomic_bw FETCH_AND_ADD
	atomic_test ib_atomic_bw CMP_AND_SWAP
	atomic_test ib_atomic_lat FETCH_AND_ADD
	atomic_test ib_atomic_lat CMP_AND_SWAP
}

for_each_backend atomic_tests
