#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# UC between two devices whose egress drops and reorders packets (fixed
# seed): tests/e2e/ud_uc/uc_faults.c checks that messages are lost whole and never
# delivered corrupt or twice, for SEND and for RDMA WRITE with immediate,
# and that READ is refused on UC. `rocemu stats` shows what was injected
# and what the UC responder dropped, and the capture of each device decodes
# in tshark as InfiniBand with no malformed frame.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
UC_FAULTS=$top_builddir/tests/e2e/ud_uc/uc_faults
require_built "$UC_FAULTS"
use_test_net 141

FAULTS="drop=0.05,reorder=0.02,seed=11"

uc_faults() {
	local pcap_dir=$WORK_DIR/pcap-$BACKEND

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)" ROCEMU_FAULTS=$FAULTS \
		ROCEMU_PCAP=$pcap_dir start_daemon
	export ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	capture 60 "$ROCEMU" run -- "$UC_FAULTS" rocemu0 rocemu1 || fail "uc_faults under $FAULTS"
	expect_checks_passed "UC under $FAULTS"
	capture 10 "$ROCEMU" stats || fail "rocemu stats"
	expect "^rocemu0 fault_dropped [1-9]" "packets were dropped"
	expect "^rocemu0 fault_reordered [1-9]" "packets were reordered"
	expect "^rocemu1 rx_uc_dropped [1-9]" "the UC responder dropped the rest of broken messages"
	expect "^rocemu0 retransmitted_packets 0$" "UC sent nothing again"
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	check_captures "$pcap_dir"
}

for_each_backend uc_faults
