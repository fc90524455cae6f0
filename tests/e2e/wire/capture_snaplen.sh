#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The capture's snap length: with ROCEMU_PCAP_SNAPLEN unset, every record of
# RC SENDs, WRITEs and READs of 1 KiB packets is the frame's first 322 bytes
# (or the whole frame when shorter) and says the whole frame's length, the
# file header says 322, tshark decodes every frame's opcode, PSN and QPN
# with no malformed frame and no error-level expert info, and pcap_check
# checks what each record holds. With ROCEMU_PCAP_SNAPLEN=0 every record is
# whole and pcap_check verifies every UDP checksum and ICRC. A bad value
# stops the daemon at start with one line naming the variable.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
PCAP_CHECK=$top_builddir/tests/e2e/wire/pcap_check
require_built "$PCAP_CHECK"
require_programs ib_send_bw ib_write_bw ib_read_bw tshark ss od
use_test_net 145

# traffic: 5 iterations of each perftest between rocemu0 (server) and rocemu1.
traffic() {
	local tool

	for tool in ib_send_bw ib_write_bw ib_read_bw; do
		next_port
		run_pair "$tool" 60 "$tool" -d rocemu0 -p "$PAIR_PORT" -n 5 -s 4096 -m 1024 \
			--client "$tool" -d rocemu1 -p "$PAIR_PORT" -n 5 -s 4096 -m 1024 "$(addr 1)"
	done
}

# check_records FILE SNAPLEN: the header says SNAPLEN (0: 262144), each record
# holds min(frame, SNAPLEN) bytes (all with 0) and tshark decodes its BTH.
check_records() {
	local file=$1 snaplen=$2 header bad cut

	header=$(od -An -tu4 -j16 -N4 "$file" | tr -d ' ')
	[ "$header" -eq "$([ "$snaplen" -eq 0 ] && echo 262144 || echo "$snaplen")" ] ||
		fail "$(basename "$file"): the file header says snap length $header"
	ok "$(basename "$file"): the file header says snap length $header"
	capture 60 tshark -r "$file" "${TSHARK_IB[@]}" -T fields -e frame.cap_len -e frame.len \
		-e infiniband.bth.opcode -e infiniband.bth.psn -e infiniband.bth.destqp ||
		fail "tshark cannot read $file"
	bad=$(awk -v s="$snaplen" '$1 ~ /^[0-9]+$/ {
		want = s && $2 > s ? s : $2
		if (NF != 5 || $1 != want || $5 !~ /^0x[0-9a-f]+$/) n++ } END { print n + 0 }' "$OUT")
	cut=$(awk '$1 ~ /^[0-9]+$/ && $1 < $2' "$OUT" | wc -l)
	[ "$bad" -eq 0 ] || fail "$(basename "$file"): $bad records not cut at $snaplen or not decoded"
	if [ "$snaplen" -eq 0 ]; then
		[ "$cut" -eq 0 ] || fail "$(basename "$file"): $cut records cut with snap length 0"
	else
		[ "$cut" -gt 0 ] || fail "$(basename "$file"): no record cut at $snaplen"
	fi
	ok "$(basename "$file"): $cut records cut, each holding min(frame, $snaplen) bytes; opcode, PSN, QPN decoded"
	expect_decoded "$file" '^eth:.*:infiniband' InfiniBand
	capture 60 tshark -r "$file" "${TSHARK_IB[@]}" -q -z expert,error ||
		fail "tshark cannot list the expert info of $file"
	expect_none "^Errors \(" "$(basename "$file"): no error-level expert info"
	capture 60 "$PCAP_CHECK" "$file" || fail "$(cat "$OUT")"
	expect_fixed " 0 bad, $cut cut " "pcap_check: $(cat "$OUT")"
}

capture_snaplen() {
	local pcap=$WORK_DIR/pcap-$BACKEND value

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_PCAP=$pcap start_daemon
	traffic
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	check_records "$pcap/rocemu0.pcap" 322
	check_records "$pcap/rocemu1.pcap" 322

	ROCEMU_PCAP=$pcap-whole ROCEMU_PCAP_SNAPLEN=0 start_daemon
	traffic
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	check_records "$pcap-whole/rocemu0.pcap" 0
	check_records "$pcap-whole/rocemu1.pcap" 0

	for value in -1 abc 262145 99999999999999999999; do
		if ROCEMU_PCAP=$pcap-bad ROCEMU_PCAP_SNAPLEN=$value capture 10 "$ROCEMUD"; then
			fail "rocemud started with ROCEMU_PCAP_SNAPLEN='$value'"
		fi
		expect_fixed "ROCEMU_PCAP_SNAPLEN: '$value' is not a snap length" \
			"ROCEMU_PCAP_SNAPLEN='$value': the daemon refuses to start, saying why"
		[ "$(wc -l <"$OUT")" -eq 1 ] || fail "ROCEMU_PCAP_SNAPLEN='$value': more than one line"
	done
}

for_each_backend capture_snaplen
