#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified clients over XRC, server on rocemu0 and client on rocemu1 as
# two processes: ibv_xsrq_pingpong (XRC domain, SRQs, initiator and target
# QPs on each side, remote SRQ numbers in every send) and perftest's
# ib_send_bw -c XRC (through the ibv_wr_* API and ibv_wr_set_xrc_srqn).
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_xsrq_pingpong ib_send_bw ss
use_test_net 191

# xsrq_pingpong [OPTION...]
xsrq_pingpong() {
	local what="ibv_xsrq_pingpong${*:+ $*}"

	next_port
	run_pair "$what" 30 \
		ibv_xsrq_pingpong -d rocemu0 -g 0 -p "$PAIR_PORT" "$@" \
		--client \
		ibv_xsrq_pingpong -d rocemu1 -g 0 -p "$PAIR_PORT" "$@" 127.0.0.1
	expect_both "^ +local: LID 0000, QPN RECV [0-9a-f]{6} SEND [0-9a-f]{6}, PSN [0-9a-f]{6}, SRQN [0-9a-f]{6}" \
		"$what: initiator, target and SRQ on each side"
	expect_both "^success$" "$what: every message received and answered"
	expect_neither "Failed|Couldn't|error" "$what: no failure"
}

send_bw_xrc() {
	local size=$1 iters=$2 what

	what="ib_send_bw -c XRC -s $size -n $iters"
	next_port
	run_pair "$what" 30 \
		ib_send_bw -c XRC -d rocemu0 -x 0 -F -p "$PAIR_PORT" -s "$size" -n "$iters" \
		--client \
		ib_send_bw -c XRC -d rocemu1 -x 0 -F -p "$PAIR_PORT" -s "$size" -n "$iters" 127.0.0.1
	expect_both "^ Connection type : XRC" "$what: XRC QPs"
	expect_both "^ *#bytes +#iterations " "$what: report header"
	expect_both "^ *$size +$iters +[0-9]+\.[0-9]+" "$what: report line"
}

xrc_clients() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	xsrq_pingpong
	xsrq_pingpong -s 10000 -n 20 -m 1024
	send_bw_xrc 4096 500
	send_bw_xrc 65536 100
}

for_each_backend xrc_clients
