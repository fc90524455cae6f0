#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified ibv_rc_pingpong, server and client as two processes, data
# validated (-c): messages of 1 byte to 1 MiB, polled, with CQ events (-e)
# and with the ibv_qp_ex send API (-N); both ends on one device, then on
# two devices of the daemon.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_rc_pingpong ss
use_test_net 20

SIZES=(1 4096 65536 1048576)
MODES=("" "-e" "-N")

# pingpong SERVER_DEV CLIENT_DEV SIZE [OPTION...]
pingpong() {
	local server_dev=$1 client_dev=$2 size=$3 iters what

	shift 3
	iters=$([ "$size" -ge 1048576 ] && echo 10 || echo 50)
	what="ibv_rc_pingpong${*:+ $*} -s $size -n $iters, $server_dev <- $client_dev"
	next_port
	run_pair "$what" 30 \
		ibv_rc_pingpong -d "$server_dev" -g 0 -c -p "$PAIR_PORT" -s "$size" -n "$iters" "$@" \
		--client \
		ibv_rc_pingpong -d "$client_dev" -g 0 -c -p "$PAIR_PORT" -s "$size" -n "$iters" "$@" 127.0.0.1
	expect_both "^$((2 * size * iters)) bytes in [0-9.]+ seconds = " "$what: all bytes moved"
	expect_both "^$iters iters in [0-9.]+ seconds = " "$what: all iterations"
	expect_neither "invalid data" "$what: data validated"
}

rc_pingpong() {
	local size mode

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	for size in "${SIZES[@]}"; do
		for mode in "${MODES[@]}"; do
			# shellcheck disable=SC2086
			pingpong rocemu0 rocemu0 "$size" $mode
			# shellcheck disable=SC2086
			pingpong rocemu0 rocemu1 "$size" $mode
		done
	done
}

for_each_backend rc_pingpong
