#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# docs/tutorial.md runs as written: its ```sh blocks, in order, as one
# script (in a network namespace of its own, so its 127.0.0.1 and
# 127.0.0.2 and TCP ports are its own), with the build's rocemu and
# rocemud first on PATH. Every command succeeds, and what it makes is what
# the text says: pingpongs with data checked, a capture tshark decodes,
# ladders of a SEND, WRITEs, READs, a SEND burst on one receive (RNR NAKs
# when the scheduling makes them) and a recovered loss, the QP states, and
# the fault counters.
NETNS_REQUIRED=1
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_netns.sh"
ip link set lo up 2>/dev/null || { echo "SKIP: tutorial: no loopback in the test's namespace"; exit 77; }
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
require_programs ib_write_bw ib_read_bw ib_send_bw ibv_rc_pingpong tshark ss python3
use_test_net 75
TUTORIAL=$top_srcdir/docs/tutorial.md

# has_arrows SVG CLASS...: the ladder is SVG and has an arrow of each CLASS.
has_arrows() {
	local svg=$WORK_DIR/$1 class

	shift
	capture 30 python3 -c "$LADDER_ARROWS" "$svg" || fail "$(basename "$svg") is not valid SVG"
	for class in "$@"; do
		grep -Eq "^$class" "$OUT" || fail "$(basename "$svg") has no '$class' arrow"
	done
	ok "$(basename "$svg"): valid SVG, arrows $*"
}

tutorial() {
	local script=$WORK_DIR/tutorial-$BACKEND.sh out=$WORK_DIR/tutorial-$BACKEND.out

	mkdir -p -m 0700 "$ROCEMU_RUNTIME_DIR"
	awk '/^```sh$/ { on = 1; next } /^```/ { on = 0 } on' "$TUTORIAL" >"$script"
	[ -s "$script" ] || fail "no sh block in $TUTORIAL"
	echo "+ the sh blocks of docs/tutorial.md ($(wc -l <"$script") lines)" >>"$COMMANDS_LOG"
	(cd "$WORK_DIR" && unset ROCEMU_DEVICES &&
		PATH=$top_builddir/tools:$PATH run_with_timeout 180 bash -e "$script") >"$out" 2>&1
	local status=$?
	cat "$out" >>"$COMMANDS_LOG"
	# The daemon of the tutorial, if a command failed before `rocemu stop`.
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	[ "$status" -eq 0 ] || fail "a command of the tutorial failed (status $status): $(tail -3 "$out")"
	ok "every command of the tutorial ran"

	OUT=$out
	expect "^rocemu0\b|rocemu0 " "ibv_devices lists rocemu0"
	expect "link_layer:[[:space:]]+Ethernet" "ibv_devinfo: a RoCE port"
	[ "$(grep -c '^5 iters in ' "$out")" -eq 2 ] || fail "the pingpong's two ends did not both finish"
	ok "the pingpong: both ends, data checked"
	expect "RC Send First QP=0x[0-9a-f]+ *$" "tshark decodes the SEND"
	expect "RC Acknowledge QP=" "and its Acknowledge"
	expect "qp 0x[0-9a-f]+ RESET -> INIT: ibv_modify_qp" "the trace shows RESET -> INIT"
	expect "qp 0x[0-9a-f]+ RTR -> RTS: ibv_modify_qp" "and RTR -> RTS"
	expect "cqe cq 0x[0-9a-f]+ qp 0x[0-9a-f]+ send wqe [0-9]+ SEND: success" "and a send CQE"
	expect "^rocemu1 fault_dropped [1-9]" "the fault dropped packets"
	expect "^rocemu1 retransmitted_packets [1-9]" "and RC sent them again"
	[ "$(grep -c '^10 iters in ' "$out")" -eq 2 ] || fail "the pingpong under faults did not finish"
	ok "the pingpong under faults: every byte checked"

	has_arrows send.svg request ack
	has_arrows write.svg request ack
	grep -q "RC RDMA Write First" "$WORK_DIR/write.svg" || fail "write.svg shows no RDMA Write First"
	has_arrows read.svg request response
	grep -q "RC RDMA Read Request" "$WORK_DIR/read.svg" || fail "read.svg shows no READ request"
	grep -q "RC RDMA Read Response First" "$WORK_DIR/read.svg" || fail "read.svg shows no READ response First"
	# How many SENDs meet an empty receive queue depends on scheduling: counted, not required.
	has_arrows rnr.svg request ack
	ok "rnr.svg: $(grep -c '^rnr' "$OUT") RNR NAK arrows"
	has_arrows fault.svg "request lost" retransmit
	ok "fault.svg: $(grep -c '^nak' "$OUT") NAK arrows, $(grep -c '^retransmit' "$OUT") retransmissions"
}

for_each_backend tutorial
