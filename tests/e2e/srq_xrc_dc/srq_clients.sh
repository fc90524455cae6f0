#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified clients over shared receive queues, server on rocemu0 and
# client on rocemu1 as two processes: ibv_srq_pingpong (16 QPs sharing one
# SRQ, data validated with -c) and perftest's ib_send_bw --use-srq; what
# `rocemu status` says of a waiting server's SRQ.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_srq_pingpong ib_send_bw ss
use_test_net 150

# srq_pingpong SIZE ITERS [OPTION...]
srq_pingpong() {
	local size=$1 iters=$2 what

	shift 2
	what="ibv_srq_pingpong${*:+ $*} -s $size -n $iters"
	next_port
	run_pair "$what" 30 \
		ibv_srq_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" -s "$size" -n "$iters" "$@" \
		--client \
		ibv_srq_pingpong -d rocemu1 -g 0 -c -p "$PAIR_PORT" -s "$size" -n "$iters" "$@" 127.0.0.1
	expect_both "^$((2 * size * iters)) bytes in [0-9.]+ seconds = " "$what: all bytes moved"
	expect_both "^$iters iters in [0-9.]+ seconds = " "$what: all iterations"
	expect_neither "invalid data|Failed|Couldn't" "$what: data validated, no failure"
}

send_bw_srq() {
	local size=4096 iters=200 what

	what="ib_send_bw --use-srq -s $size -n $iters"
	next_port
	run_pair "$what" 30 \
		ib_send_bw --use-srq -d rocemu0 -x 0 -F -p "$PAIR_PORT" -s "$size" -n "$iters" \
		--client \
		ib_send_bw --use-srq -d rocemu1 -x 0 -F -p "$PAIR_PORT" -s "$size" -n "$iters" 127.0.0.1
	expect_both "^ *#bytes +#iterations " "$what: report header"
	expect_both "^ *$size +$iters +[0-9]+\.[0-9]+" "$what: report line"
}

# status_of_waiting_server: ibv_srq_pingpong listens once its SRQ and QPs
# exist; a client then lets it finish.
status_of_waiting_server() {
	local out=$WORK_DIR/status-$BACKEND.out pid opts=(-g 0 -q 4 -r 100 -n 1)

	next_port
	echo "+ rocemu run -- ibv_srq_pingpong -d rocemu0 ${opts[*]} -p $PAIR_PORT &" >>"$COMMANDS_LOG"
	run_with_timeout 30 "$ROCEMU" run -- ibv_srq_pingpong -d rocemu0 "${opts[@]}" -p "$PAIR_PORT" \
		>/dev/null 2>&1 &
	pid=$!
	BACKGROUND_PIDS+=("$pid")
	wait_listening "$PAIR_PORT" "$pid" || fail "ibv_srq_pingpong did not listen on $PAIR_PORT"
	run_with_timeout 10 "$ROCEMU" status >"$out" 2>&1 || fail "rocemu status failed"
	cat "$out" >>"$COMMANDS_LOG"
	run_with_timeout 30 "$ROCEMU" run -- ibv_srq_pingpong -d rocemu1 "${opts[@]}" -p "$PAIR_PORT" \
		127.0.0.1 >/dev/null 2>&1 || fail "the client of the waiting server failed"
	wait "$pid" || fail "the waiting server failed"
	forget_pid "$pid"
	grep -q '^  srq 0x[0-9a-f]\{6\} pd [0-9]* wr 127 sge 1 limit 0 qps 4$' "$out" ||
		fail "rocemu status does not list the SRQ of 127 WQEs used by 4 QPs"
	ok "rocemu status lists the SRQ, its size and its 4 QPs"
}

srq_clients() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	srq_pingpong 4096 500
	srq_pingpong 65536 50 -q 4 -r 8
	srq_pingpong 1 500 -e
	send_bw_srq
	status_of_waiting_server
}

for_each_backend srq_clients
