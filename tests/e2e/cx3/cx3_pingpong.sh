#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified libibverbs pingpongs on ConnectX-3 devices (the shim posts and
# polls mlx4 rings, lib/mlx4/): ibv_rc_pingpong, ibv_uc_pingpong,
# ibv_ud_pingpong and ibv_srq_pingpong with their data validated (-c), in
# polled and event mode, and ibv_xsrq_pingpong; each between two ConnectX-3
# devices and between a ConnectX-3 and a ConnectX-5, both ways.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong \
	ibv_xsrq_pingpong ss
use_test_net 325

# pingpong SERVER_DEV CLIENT_DEV TOOL SIZE ITERS [OPTION...]: bytes and iterations on both sides.
pingpong() {
	local server=$1 client=$2 tool=$3 size=$4 iters=$5 what

	shift 5
	what="$tool${*:+ $*} -s $size -n $iters, $server <- $client"
	next_port
	run_pair "$what" 30 \
		"$tool" -d "$server" -g 0 -c -p "$PAIR_PORT" -s "$size" -n "$iters" "$@" \
		--client \
		"$tool" -d "$client" -g 0 -c -p "$PAIR_PORT" -s "$size" -n "$iters" "$@" 127.0.0.1
	expect_both "^$((2 * size * iters)) bytes in [0-9.]+ seconds = " "$what: all bytes moved"
	expect_both "^$iters iters in [0-9.]+ seconds = " "$what: all iterations"
	expect_neither "invalid data|Failed|Couldn't" "$what: data validated, no failure"
}

# xsrq_pingpong SERVER_DEV CLIENT_DEV: XRC initiators and targets, SRQs of a domain.
xsrq_pingpong() {
	local server=$1 client=$2 what="ibv_xsrq_pingpong, $1 <- $2"

	next_port
	run_pair "$what" 30 \
		ibv_xsrq_pingpong -d "$server" -g 0 -p "$PAIR_PORT" \
		--client \
		ibv_xsrq_pingpong -d "$client" -g 0 -p "$PAIR_PORT" 127.0.0.1
	expect_both "^ +local: LID 0000, QPN RECV [0-9a-f]{6} SEND [0-9a-f]{6}, PSN [0-9a-f]{6}, SRQN [0-9a-f]{6}" \
		"$what: initiator, target and SRQ on each side"
	expect_both "^success$" "$what: every message received and answered"
	expect_neither "Failed|Couldn't|error" "$what: no failure"
}

# every_pingpong SERVER_DEV CLIENT_DEV
every_pingpong() {
	local mode

	for mode in "" "-e"; do
		# shellcheck disable=SC2086
		pingpong "$1" "$2" ibv_rc_pingpong 1 50 $mode
		# shellcheck disable=SC2086
		pingpong "$1" "$2" ibv_rc_pingpong 65536 20 $mode
		# shellcheck disable=SC2086
		pingpong "$1" "$2" ibv_uc_pingpong 4096 50 $mode
		# shellcheck disable=SC2086
		pingpong "$1" "$2" ibv_ud_pingpong 1024 50 $mode
		# shellcheck disable=SC2086
		pingpong "$1" "$2" ibv_srq_pingpong 4096 50 $mode
	done
	xsrq_pingpong "$1" "$2"
}

cx3_pingpong() {
	ROCEMU_DEVICES="mlx4_0=$(addr 1)@cx3,mlx4_1=$(addr 2)@cx3,mlx5_0=$(addr 3)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	every_pingpong mlx4_0 mlx4_1
	every_pingpong mlx4_0 mlx5_0
	every_pingpong mlx5_0 mlx4_1
}

for_each_backend cx3_pingpong
