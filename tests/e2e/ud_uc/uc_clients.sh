#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified UC clients, server and client as two processes on two devices
# of the daemon: ibv_uc_pingpong with data validated (-c), messages of 1
# byte to 64 KiB, polled and with CQ events (-e); perftest's ib_send_bw and
# ib_write_bw -c UC. No fault is injected, so nothing may be lost.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_uc_pingpong ib_send_bw ib_write_bw ss
use_test_net 140

SIZES=(1 4096 65536)
MODES=("" "-e")

# pingpong SIZE [OPTION...]
pingpong() {
	local size=$1 iters=50 what

	shift
	what="ibv_uc_pingpong${*:+ $*} -s $size -n $iters, rocemu0 <- rocemu1"
	next_port
	run_pair "$what" 30 \
		ibv_uc_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" -s "$size" -n "$iters" "$@" \
		--client \
		ibv_uc_pingpong -d rocemu1 -g 0 -c -p "$PAIR_PORT" -s "$size" -n "$iters" "$@" 127.0.0.1
	expect_both "^$((2 * size * iters)) bytes in [0-9.]+ seconds = " "$what: all bytes moved"
	expect_both "^$iters iters in [0-9.]+ seconds = " "$what: all iterations"
	expect_neither "invalid data" "$what: data validated"
}

# perftest TOOL SIZE: one run of TOOL -c UC with messages of SIZE bytes.
perftest() {
	local tool=$1 size=$2 iters=200 what

	what="$tool -c UC -s $size -n $iters"
	next_port
	run_pair "$what" 30 \
		"$tool" -d rocemu0 -x 0 -F -c UC -p "$PAIR_PORT" -s "$size" -n "$iters" \
		--client \
		"$tool" -d rocemu1 -x 0 -F -c UC -p "$PAIR_PORT" -s "$size" -n "$iters" 127.0.0.1
	expect_both "^ *#bytes +#iterations " "$what: report header"
	expect_both "^ *$size +$iters +[0-9]+\.[0-9]+" "$what: report line"
	expect_both "^-{40,}$" "$what: report closed"
}

uc_clients() {
	local size mode tool

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	for size in "${SIZES[@]}"; do
		for mode in "${MODES[@]}"; do
			# shellcheck disable=SC2086
			pingpong "$size" $mode
		done
	done
	for tool in ib_send_bw ib_write_bw; do
		for size in 4096 65536; do
			perftest "$tool" "$size"
		done
	done
}

for_each_backend uc_clients
