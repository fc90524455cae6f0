#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# `rocemu ladder`: ibv_rc_pingpong between two devices with 10% of the
# packets dropped (seeded). From both devices' captures, the ladder SVG is
# valid SVG with one lane per QP; a packet lost (in its sender's capture,
# not in its receiver's) is followed by its retransmission, and NAKs show.
# A long run is condensed to at most 300 arrows; wrong uses fail clearly.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_rc_pingpong python3 ss
use_test_net 73

pingpong() {
	next_port
	run_pair "ibv_rc_pingpong -s $1 -n $2" 60 \
		ibv_rc_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" -s "$1" -n "$2" \
		--client ibv_rc_pingpong -d rocemu1 -g 0 -c -p "$PAIR_PORT" -s "$1" -n "$2" 127.0.0.1
	expect_both "^$2 iters in " "ibv_rc_pingpong -s $1 -n $2: every iteration, data checked"
}

ladder() {
	local pcap=$WORK_DIR/pcap-$BACKEND svg=$WORK_DIR/drops-$BACKEND.svg arrows lost psn

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_PCAP=$pcap ROCEMU_FAULTS=drop=0.1,seed=5 start_daemon
	pingpong 4096 20
	stop_daemon "$ROCEMU_RUNTIME_DIR"

	capture 30 "$ROCEMU" ladder "$pcap/rocemu0.pcap" "$pcap/rocemu1.pcap" -o "$svg" ||
		fail "rocemu ladder failed"
	expect "drops-$BACKEND.svg: [0-9]+ packets, 2 lanes( \\(condensed\\))?$" "one lane per QP: $(cat "$OUT")"
	capture 30 python3 -c "$LADDER_ARROWS" "$svg" || fail "the ladder is not valid SVG"
	arrows=$OUT
	lost=$(grep -m1 ' lost|' "$arrows") || fail "no arrow marked lost"
	psn=$(sed -E 's/.* PSN ([0-9]+).*/\1/' <<<"$lost")
	ok "a lost packet: ${lost#*|}"
	awk -v psn="$psn" -F'|' '
		seen_lost && $1 ~ /^retransmit/ && $2 ~ (" PSN " psn " ") { found = 1; exit }
		$1 ~ / lost$/ && $2 ~ (" PSN " psn " ") { seen_lost = 1 }
		END { exit !found }' "$arrows" ||
		fail "no retransmission of PSN $psn after its loss"
	ok "PSN $psn is retransmitted after it was lost"
	grep -q '^nak|NAK PSN sequence error' "$arrows" || fail "no NAK arrow"
	ok "$(grep -c '^nak|' "$arrows") NAK arrows (PSN sequence error)"
	grep -q '^ack|' "$arrows" || fail "no ACK arrow"

	# A long run, one capture: condensed into at most 300 arrows, none lost.
	ROCEMU_PCAP=$pcap-long start_daemon
	pingpong 65536 200
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	capture 30 "$ROCEMU" ladder "$pcap-long/rocemu0.pcap" -o "$svg" || fail "rocemu ladder of the long run failed"
	expect "\(condensed\)$" "the long run is condensed: $(cat "$OUT")"
	capture 30 python3 -c "$LADDER_ARROWS" "$svg" || fail "the long run's ladder is not valid SVG"
	[ "$(grep -c '|' "$OUT")" -le 300 ] || fail "$(grep -c '|' "$OUT") arrows, over 300"
	expect_none " lost\|" "one capture: nothing marked lost"
	expect "×[0-9]+ PSN [0-9]+\.\.[0-9]+" "runs drawn as one arrow with a count and a PSN range"

	if capture 10 "$ROCEMU" ladder "$WORK_DIR/none.pcap" -o "$svg"; then
		fail "a ladder of a missing file succeeded"
	fi
	expect "rocemu: ladder: .*none.pcap" "a missing capture: an error naming it"
	if capture 10 "$ROCEMU" ladder "$pcap/rocemu0.pcap"; then
		fail "a ladder without -o succeeded"
	fi
	expect "usage: rocemu ladder" "no -o: the usage line"
}

for_each_backend ladder
