#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Soak: 16 RC QP pairs between two devices carry 100k messages of SEND,
# RDMA WRITE, RDMA READ and FETCH_AND_ADD (tests/e2e/soak.c checks order,
# data and the exact sums) while both devices drop 10%, duplicate 2%,
# reorder 5% and corrupt 1% of what they send. The QPs use a short local
# ACK timeout so that losses at the tail of a burst are resent quickly.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SOAK=$top_builddir/tests/e2e/soak
require_built "$SOAK"
use_test_net 32

FAULTS="drop=0.1,dup=0.02,reorder=0.05,corrupt=0.01,seed=42"

soak() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)" ROCEMU_FAULTS=$FAULTS start_daemon
	export ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	capture 110 "$ROCEMU" run -- "$SOAK" -a -q 16 -n 100000 rocemu0 rocemu1 ||
		fail "soak under $FAULTS"
	expect "^16 QPs, 100000 messages: .* 0 failures$" "100k messages under $FAULTS, all checked"
	capture 10 "$ROCEMU" stats || fail "rocemu stats"
	expect "^rocemu0 fault_corrupted [1-9]" "corrupted packets were injected"
	expect "^rocemu1 rx_icrc_errors [1-9]" "the receiver dropped them on their ICRC"
	expect "^rocemu0 retransmitted_packets [1-9]" "the requester resent"
}

for_each_backend soak
