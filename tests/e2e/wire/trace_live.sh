#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# `rocemu trace` on a running daemon: during an ibv_rc_pingpong whose
# client's packets are sometimes corrupted (seeded), one trace of
# everything shows packets both ways with their PSNs, a corrupted frame as
# "ICRC bad" followed by its retransmission, the QPs' state changes and
# the CQEs; a trace of CQEs only shows nothing else; a trace of one QP
# shows that QP's packets both ways and nothing of the other QP; a trace
# started and killed in the middle of the traffic changes nothing; a port
# taken down shows as an async event. Wrong uses fail clearly.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_rc_pingpong ss
use_test_net 74

# start_trace OUT ARGS...: `rocemu trace ARGS` into OUT in the background; TRACE_PID.
start_trace() {
	local out=$1

	shift
	echo "+ rocemu trace $* > $(basename "$out") &" >>"$COMMANDS_LOG"
	# timeout itself is the background job: its one child is the CLI, which pkill -P reaches.
	timeout -k 5 120 "$ROCEMU" trace "$@" >"$out" 2>"$out.err" &
	TRACE_PID=$!
	BACKGROUND_PIDS+=("$TRACE_PID")
	for _ in $(seq 100); do
		grep -q "tracing" "$out.err" && return 0
		sleep 0.05
	done
	fail "rocemu trace $* did not start: $(cat "$out.err")"
}

# stop_trace PID OUT: Ctrl-C (to rocemu, under its timeout) ends it with status 0.
stop_trace() {
	local status=0

	pkill -INT -P "$1"
	wait "$1" || status=$?
	forget_pid "$1"
	[ "$status" -eq 0 ] || fail "rocemu trace > $(basename "$2") exited with status $status on SIGINT: $(cat "$2.err")"
}

trace_live() {
	local all=$WORK_DIR/all-$BACKEND.txt cqes=$WORK_DIR/cqe-$BACKEND.txt
	local one=$WORK_DIR/qp-$BACKEND.txt brief=$WORK_DIR/brief-$BACKEND.txt
	local all_pid cqe_pid qp_pid brief_pid bad psn server

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	start_trace "$all"
	all_pid=$TRACE_PID
	start_trace "$cqes" --kind cqe
	cqe_pid=$TRACE_PID
	# The first QP of a fresh daemon is 0x000100: the server's, on rocemu0.
	start_trace "$one" rocemu0 --qp 0x100
	qp_pid=$TRACE_PID
	run_with_timeout 10 "$ROCEMU" fault rocemu1 corrupt=0.05,seed=4 || fail "rocemu fault failed"

	next_port
	run_with_timeout 60 "$ROCEMU" run -- ibv_rc_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" \
		-s 4096 -n 40 >"$WORK_DIR/server.out" 2>&1 &
	server=$!
	BACKGROUND_PIDS+=("$server")
	wait_listening "$PAIR_PORT" "$server" || fail "ibv_rc_pingpong's server does not listen"
	start_trace "$brief" rocemu1
	brief_pid=$TRACE_PID
	capture 60 "$ROCEMU" run -- ibv_rc_pingpong -d rocemu1 -g 0 -c -p "$PAIR_PORT" -s 4096 -n 40 \
		127.0.0.1 || fail "ibv_rc_pingpong's client failed"
	pkill -KILL -P "$brief_pid"
	wait "$brief_pid" 2>/dev/null
	forget_pid "$brief_pid"
	expect "^40 iters in " "a trace started and killed during the traffic: every iteration"
	wait "$server" || fail "ibv_rc_pingpong's server failed"
	forget_pid "$server"
	OUT=$WORK_DIR/server.out expect "^40 iters in " "the server's 40 iterations, data checked"

	# A context is open while the port goes down and up again.
	next_port
	run_with_timeout 30 "$ROCEMU" run -- ibv_rc_pingpong -d rocemu0 -g 0 -p "$PAIR_PORT" \
		>/dev/null 2>&1 &
	server=$!
	BACKGROUND_PIDS+=("$server")
	wait_listening "$PAIR_PORT" "$server" || fail "the second server does not listen"
	run_with_timeout 10 "$ROCEMU" down rocemu0 && run_with_timeout 10 "$ROCEMU" up rocemu0 ||
		fail "rocemu down/up rocemu0 failed"
	for _ in $(seq 100); do
		grep -q "rocemu0 async PORT_ACTIVE" "$all" && break
		sleep 0.05
	done
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
	forget_pid "$server"
	stop_trace "$all_pid" "$all"
	stop_trace "$cqe_pid" "$cqes"
	stop_trace "$qp_pid" "$one"

	OUT=$all
	expect "rocemu1 tx $(addr 2):[0-9]+ > $(addr 1) QP 0x000100 RC Send First PSN [0-9]+ 1024 B$" \
		"the client's SEND packets, decoded"
	expect "rocemu0 tx $(addr 1):[0-9]+ > $(addr 2) QP 0x000101 RC Acknowledge PSN [0-9]+ 0 B ACK$" \
		"the server's ACKs, in words"
	expect "rocemu0 rx $(addr 2):[0-9]+ > $(addr 1) QP 0x000100 RC Send Last PSN [0-9]+ 1024 B$" \
		"packets received"
	bad=$(grep -m1 "rocemu0 rx .* ICRC bad$" "$all") || fail "no corrupted frame flagged ICRC bad"
	psn=$(sed -E 's/.* PSN ([0-9]+) .*/\1/' <<<"$bad")
	ok "a corrupted frame: ${bad#* }"
	sed -n "/$(sed 's/[.[\*^$/]/\\&/g' <<<"$bad")/,\$p" "$all" |
		grep -Eq "rocemu1 tx .* PSN $psn 1024 B$" || fail "PSN $psn is not sent again after its ICRC error"
	ok "PSN $psn sent again after the ICRC error"
	for step in "RESET -> INIT" "INIT -> RTR" "RTR -> RTS"; do
		expect "rocemu0 qp 0x000100 $step: ibv_modify_qp" "the server's QP: $step"
	done
	expect "rocemu1 cqe cq 0x[0-9a-f]+ qp 0x000101 send wqe [0-9]+ SEND: success" "send CQEs"
	expect "rocemu0 cqe cq 0x[0-9a-f]+ qp 0x000100 recv RESP_SEND 4096 B: success" "receive CQEs"
	expect "rocemu0 async PORT_ERR$" "the port taken down: an async event"
	expect "rocemu0 async PORT_ACTIVE$" "and up again"

	OUT=$cqes
	[ "$(grep -c ' cqe ' "$cqes")" -ge 160 ] || fail "$(grep -c ' cqe ' "$cqes") CQE lines, not 160"
	expect_none "^[0-9:.]+ rocemu[01] (tx|rx|qp|async) " "--kind cqe: CQEs only"
	ok "--kind cqe: $(grep -c ' cqe ' "$cqes") CQEs"

	OUT=$one
	expect "rocemu0 rx .* QP 0x000100 RC Send" "--qp: packets to the QP"
	expect "rocemu0 tx .* QP 0x000101 RC Acknowledge" "--qp: packets the QP sends"
	expect_none "rocemu1 |qp 0x000101 " "--qp on rocemu0: nothing of rocemu1 or of QP 0x000101"

	if capture 10 "$ROCEMU" trace nosuchdev; then
		fail "a trace of an unknown device succeeded"
	fi
	expect_fixed "rocemu: no device nosuchdev" "an unknown device: refused, naming it"
	if capture 10 "$ROCEMU" trace --kind bogus; then
		fail "a trace of an unknown kind succeeded"
	fi
	expect "usage: rocemu trace" "an unknown kind: the usage line"
}

for_each_backend trace_live
