#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Captures of every transport are what a wire would carry: unmodified
# perftest moves RC SENDs, WRITEs, READs and atomics, UD and UC SENDs, UC
# WRITEs and XRC SENDs between two devices of one daemon that captures
# both; tshark decodes every frame as InfiniBand with no malformed frame
# and no error-level expert info, and the project's own checker
# (tests/e2e/wire/pcap_check.c) recomputes every IPv4 and UDP length and sum
# and every ICRC (whole frames: ROCEMU_PCAP_SNAPLEN=0), and sees each of
# those opcodes.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
PCAP_CHECK=$top_builddir/tests/e2e/wire/pcap_check
require_built "$PCAP_CHECK"
require_programs ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw tshark ss
use_test_net 76

# perftest TOOL [OPTION...]: 5 iterations of TOOL between rocemu0 (server) and rocemu1.
perftest() {
	local tool=$1

	shift
	next_port
	run_pair "$tool $*" 60 "$tool" -d rocemu0 -p "$PAIR_PORT" -n 5 "$@" \
		--client "$tool" -d rocemu1 -p "$PAIR_PORT" -n 5 "$@" "$(addr 1)"
}

capture_check() {
	local pcap=$WORK_DIR/pcap-$BACKEND file op

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_PCAP=$pcap ROCEMU_PCAP_SNAPLEN=0 start_daemon
	perftest ib_send_bw -s 4096 -m 1024
	perftest ib_write_bw -s 4096 -m 1024
	perftest ib_read_bw -s 4096 -m 1024
	perftest ib_atomic_bw
	perftest ib_send_bw -c UD -s 512
	perftest ib_send_bw -c UC -s 4096 -m 1024
	perftest ib_write_bw -c UC -s 4096 -m 1024
	perftest ib_send_bw -c XRC -s 4096 -m 1024
	stop_daemon "$ROCEMU_RUNTIME_DIR"

	for file in "$pcap"/rocemu0.pcap "$pcap"/rocemu1.pcap; do
		check_capture "$file"
		capture 60 tshark -r "$file" "${TSHARK_IB[@]}" -q -z expert,error ||
			fail "tshark cannot list the expert info of $file"
		expect_none "^Errors \(" "$(basename "$file"): no error-level expert info"
		capture 60 "$PCAP_CHECK" "$file" || fail "$(cat "$OUT")"
		expect_fixed " 0 cut " "$(cat "$OUT")"
	done
	capture 60 "$PCAP_CHECK" "$pcap"/rocemu0.pcap "$pcap"/rocemu1.pcap
	for op in "RC Send First" "RC Send Last" "RC RDMA Write First" "RC RDMA Read Request" \
		"RC RDMA Read Response First" "RC Fetch Add" "RC Atomic Acknowledge" "UD Send Only" \
		"UC Send First" "UC RDMA Write First" "XRC Send First" "XRC Acknowledge"; do
		expect_fixed " $op x" "the captures hold $op packets, each checked"
	done
}

for_each_backend capture_check
