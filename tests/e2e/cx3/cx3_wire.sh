#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A ConnectX-3 device speaks the ConnectX-5's RoCEv2: the same unmodified
# runs (ibv_rc, uc, ud and srq_pingpong, ib_read_bw, ib_atomic_bw) between
# two ConnectX-5s, then between a ConnectX-3 and a ConnectX-5 each way, are
# captured; every frame is a whole RoCEv2 packet with a valid ICRC
# (pcap_check), and each side's frames are of the same forms (IP TOS, TTL
# and DF, UDP port, every BTH field but the QPN and PSN, and length) as the
# ConnectX-5 side's in the ConnectX-5 pair.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
PCAP_CHECK=$top_builddir/tests/e2e/wire/pcap_check
require_built "$PCAP_CHECK"
require_programs ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong \
	ib_read_bw ib_atomic_bw tshark ss
use_test_net 324

# pingpong TOOL SIZE SERVER_DEV CLIENT_DEV: 20 round trips, data validated.
pingpong() {
	local what="$1 -s $2 -n 20, $3 <- $4"

	next_port
	run_pair "$what" 30 "$1" -d "$3" -g 0 -c -p "$PAIR_PORT" -s "$2" -n 20 \
		--client "$1" -d "$4" -g 0 -c -p "$PAIR_PORT" -s "$2" -n 20 127.0.0.1
	expect_both "^20 iters in [0-9.]+ seconds = " "$what: all iterations"
	expect_neither "invalid data" "$what: data validated"
}

# perftest TOOL SIZE SERVER_DEV CLIENT_DEV: 50 operations at a path MTU of
# 1024 (perftest's own choice differs: 2048 on a ConnectX-3, for its 4K MTU erratum).
perftest() {
	local what="$1 -s $2 -n 50, $3 <- $4"

	next_port
	run_pair "$what" 30 "$1" -d "$3" -x 0 -F -m 1024 -p "$PAIR_PORT" -s "$2" -n 50 \
		--client "$1" -d "$4" -x 0 -F -m 1024 -p "$PAIR_PORT" -s "$2" -n 50 127.0.0.1
	expect_client "^ *$2 +50 +[0-9]+\.[0-9]+" "$what: report line"
}

# traffic SERVER_DEV CLIENT_DEV: the runs every pair makes.
traffic() {
	pingpong ibv_rc_pingpong 4096 "$1" "$2"
	pingpong ibv_uc_pingpong 2048 "$1" "$2"
	pingpong ibv_ud_pingpong 1024 "$1" "$2"
	pingpong ibv_srq_pingpong 4096 "$1" "$2"
	perftest ib_read_bw 65536 "$1" "$2"
	perftest ib_atomic_bw 8 "$1" "$2"
}

# forms PCAP: the distinct forms of its frames, one per line, into PCAP.forms.
forms() {
	capture 30 tshark -r "$1" "${TSHARK_IB[@]}" -T fields -e ip.dsfield -e ip.ttl \
		-e ip.flags.df -e udp.dstport -e infiniband.bth.opcode -e infiniband.bth.se \
		-e infiniband.bth.m -e infiniband.bth.padcnt -e infiniband.bth.tver \
		-e infiniband.bth.p_key -e infiniband.bth.a -e frame.len ||
		fail "tshark cannot read $1"
	grep -E '^0x' "$OUT" | sort -u >"$1.forms"
	[ -s "$1.forms" ] || fail "$1: no RoCEv2 frame"
}

# pair_run NAME SERVER_SPEC CLIENT_SPEC: a daemon of the two devices, captured, the traffic.
pair_run() {
	local dir=$WORK_DIR/$BACKEND-$1

	mkdir -p "$dir"
	ROCEMU_DEVICES="server=$(addr 1)$2,client=$(addr 2)$3"
	export ROCEMU_DEVICES
	ROCEMU_PCAP=$dir start_daemon
	traffic server client
	end_daemon
	capture 30 "$PCAP_CHECK" "$dir/server.pcap" "$dir/client.pcap" ||
		fail "$1: a captured frame is no whole RoCEv2 packet with a valid ICRC"
	ok "$1: every frame of both captures whole, ICRC valid"
	forms "$dir/server.pcap"
	forms "$dir/client.pcap"
}

# same_forms A B WHAT: the frames of captures A and B have the same forms.
same_forms() {
	if ! diff "$1.forms" "$2.forms" >>"$COMMANDS_LOG"; then
		fail "$3: the frames differ in form (diff above)"
	fi
	ok "$3: $(wc -l <"$1.forms") forms of frame, the same"
}

cx3_wire() {
	local base=$WORK_DIR/$BACKEND

	pair_run cx5-cx5 "" ""
	pair_run cx3-cx5 "@cx3" ""
	pair_run cx5-cx3 "" "@cx3"
	same_forms "$base-cx5-cx5/server.pcap" "$base-cx3-cx5/server.pcap" "ConnectX-3 server"
	same_forms "$base-cx5-cx5/client.pcap" "$base-cx3-cx5/client.pcap" "its ConnectX-5 client"
	same_forms "$base-cx5-cx5/client.pcap" "$base-cx5-cx3/client.pcap" "ConnectX-3 client"
	same_forms "$base-cx5-cx5/server.pcap" "$base-cx5-cx3/server.pcap" "its ConnectX-5 server"
}

for_each_backend cx3_wire
