#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified ibv_rc_pingpong -c between two devices whose egress drops,
# duplicates and reorders packets (fixed seed): every buffer arrives intact
# through retransmission. Then `rocemu stats` shows what was injected and
# resent, `rocemu fault` changes the faults at run time (delay alone is
# checked with a strict pair), and the capture of
# each device decodes in tshark as InfiniBand with no malformed frame.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_rc_pingpong ss
use_test_net 30

FAULTS="drop=0.05,dup=0.02,reorder=0.02,seed=7"
# ibv_rc_pingpong has no closing handshake: see last_ack_lost in lib_pair.sh.
PAIR_LOSSY=1

# pingpong SIZE ITERS
pingpong() {
	local size=$1 ITERS=$2 what

	what="ibv_rc_pingpong -s $size -n $ITERS under $FAULTS"
	next_port
	run_pair "$what" 60 \
		ibv_rc_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" -s "$size" -n "$ITERS" \
		--client \
		ibv_rc_pingpong -d rocemu1 -g 0 -c -p "$PAIR_PORT" -s "$size" -n "$ITERS" 127.0.0.1
	# A side that finished received and checked (-c) every one of its peer's buffers.
	expect_finished "^$((2 * size * ITERS)) bytes in [0-9.]+ seconds = " "$what: all bytes moved"
	expect_finished "^$ITERS iters in [0-9.]+ seconds = " "$what: all iterations"
	expect_neither "invalid data" "$what: data validated"
}

# stat DEV COUNTER: the counter's value in the last output of `rocemu stats`.
stat() {
	awk -v d="$1" -v c="$2" '$1 == d && $2 == c { print $3 }' "$OUT"
}

rc_faults() {
	local dev pcap_dir=$WORK_DIR/pcap-$BACKEND

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)" ROCEMU_FAULTS=$FAULTS \
		ROCEMU_PCAP=$pcap_dir start_daemon
	export ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	pingpong 4096 200
	pingpong 65536 100

	capture 10 "$ROCEMU" stats || fail "rocemu stats"
	expect_fixed "rocemu0 faults $FAULTS" "stats show the faults in force"
	for dev in rocemu0 rocemu1; do
		[ "$(stat $dev fault_dropped)" -gt 0 ] || fail "$dev: nothing dropped"
		[ "$(stat $dev port_xmit_packets)" -gt 0 ] || fail "$dev: nothing sent"
	done
	[ $(($(stat rocemu0 retransmitted_packets) + $(stat rocemu1 retransmitted_packets))) -gt 0 ] ||
		fail "nothing was retransmitted"
	ok "stats count injected faults and retransmissions"

	capture 10 "$ROCEMU" fault rocemu0 "drop=2" && fail "a rate above 1 was accepted"
	ok "rocemu fault refuses a bad specification"
	capture 10 "$ROCEMU" fault rocemu9 off && fail "an unknown device was accepted"
	ok "rocemu fault refuses an unknown device"
	capture 10 "$ROCEMU" fault rocemu0 off || fail "rocemu fault rocemu0 off"
	capture 10 "$ROCEMU" fault rocemu1 "dup=0.5,seed=1" || fail "rocemu fault rocemu1 dup=0.5"
	capture 10 "$ROCEMU" stats || fail "rocemu stats"
	expect_fixed "rocemu0 faults off" "faults switched off at run time"
	expect_fixed "rocemu1 faults dup=0.5,seed=1" "faults changed at run time"

	# Delay alone loses nothing: every packet 200 us late, both ways, and a strict pair.
	for dev in rocemu0 rocemu1; do
		capture 10 "$ROCEMU" fault "$dev" "delay_us=200,seed=3" || fail "rocemu fault $dev delay_us=200"
	done
	PAIR_LOSSY='' FAULTS="delay_us=200,seed=3" pingpong 4096 50
	capture 10 "$ROCEMU" stats || fail "rocemu stats"
	for dev in rocemu0 rocemu1; do
		[ "$(stat $dev fault_delayed)" -gt 0 ] || fail "$dev: nothing delayed"
	done
	ok "stats count delayed packets"

	stop_daemon "$ROCEMU_RUNTIME_DIR"
	check_captures "$pcap_dir"
}

for_each_backend rc_faults
