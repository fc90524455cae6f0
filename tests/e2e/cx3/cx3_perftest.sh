#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified perftest on ConnectX-3 devices (mlx4 rings): send bandwidth and
# latency over RC, UC, UD, XRC and an SRQ, write and read bandwidth and
# latency; each between two ConnectX-3 devices and between a ConnectX-3 and a
# ConnectX-5, which must talk as two ConnectX-5s do. Short runs that must
# finish with their report on both sides.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ib_send_bw ib_write_bw ib_read_bw ib_send_lat ib_write_lat ib_read_lat ss
use_test_net 321

ITERS=200

# perftest SERVER_DEV CLIENT_DEV TOOL SIZE [OPTION...]: one run, its report on both sides.
perftest() {
	local server=$1 client=$2 tool=$3 size=$4 what

	shift 4
	what="$tool${*:+ $*} -s $size -n $ITERS, $server <- $client"
	perftest_clock "$tool"
	next_port
	run_pair "$what" 30 \
		"$tool" -d "$server" -x 0 "${PERFTEST_CLOCK[@]}" -p "$PAIR_PORT" -s "$size" -n "$ITERS" "$@" \
		--client \
		"$tool" -d "$client" -x 0 "${PERFTEST_CLOCK[@]}" -p "$PAIR_PORT" -s "$size" -n "$ITERS" "$@" 127.0.0.1
	expect_both "remote address: " "$what: peer's QP received"
	expect_client "^ *$size +$ITERS +[0-9]+\.[0-9]+" "$what: report line"
	# ib_read_lat's server only serves the reads: it prints no table.
	[ "$tool" = ib_read_lat ] || expect_server "^ *$size +$ITERS +[0-9]+\.[0-9]+" "$what: report line"
	expect_both "^-{40,}$" "$what: report closed"
}

# bandwidths SERVER_DEV CLIENT_DEV: send over every transport and an SRQ, write, read.
bandwidths() {
	perftest "$1" "$2" ib_send_bw 4096
	perftest "$1" "$2" ib_send_bw 4096 -c UC
	perftest "$1" "$2" ib_send_bw 1024 -c UD
	perftest "$1" "$2" ib_send_bw 4096 -c XRC
	perftest "$1" "$2" ib_send_bw 4096 --use-srq
	perftest "$1" "$2" ib_write_bw 65536
	perftest "$1" "$2" ib_write_bw 4096 -c UC
	perftest "$1" "$2" ib_read_bw 65536
}

# latencies SERVER_DEV CLIENT_DEV: send over every transport and an SRQ, write, read.
latencies() {
	perftest "$1" "$2" ib_send_lat 64
	perftest "$1" "$2" ib_send_lat 64 -c UC
	perftest "$1" "$2" ib_send_lat 64 -c UD
	perftest "$1" "$2" ib_send_lat 64 -c XRC
	perftest "$1" "$2" ib_send_lat 64 --use-srq
	perftest "$1" "$2" ib_write_lat 64
	perftest "$1" "$2" ib_read_lat 64
}

cx3_perftest() {
	ROCEMU_DEVICES="mlx4_0=$(addr 1)@cx3,mlx4_1=$(addr 2)@cx3,mlx5_0=$(addr 3)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	bandwidths mlx4_0 mlx4_1
	latencies mlx4_0 mlx4_1
	bandwidths mlx4_0 mlx5_0
	latencies mlx4_0 mlx5_0
	# the other way round too, as far as the test's 40 ports go
	bandwidths mlx5_0 mlx4_1
}

for_each_backend cx3_perftest
