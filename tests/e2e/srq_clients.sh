#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified clients over shared receive queues, server on rocemu0 and
# client on rocemu1 as two processes: ibv_srq_pingpong (16 QPs sharing one
# SRQ, data validated with -c) and perftest's ib_send_bw --use-srq.
. "$(dirname "${BASH_SOURCE[0]}")/lib_pair.sh"
require_programs ibv_srq_pingpong ib_send_bw ss
use_test_net 150
use_ports 25800

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

srq_clients() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	srq_pingpong 4096 500
	srq_pingpong 65536 50 -q 4 -r 8
	srq_pingpong 1 500 -e
	send_bw_srq
}

for_each_backend srq_clients
