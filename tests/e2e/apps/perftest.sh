#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified perftest (ib_{send,write,read}_{bw,lat}) over RoCEv2 GID 0,
# server on rocemu0 and client on rocemu1 as two processes: short runs that
# must finish with their report on both sides.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ib_send_bw ib_write_bw ib_read_bw ib_send_lat ib_write_lat ib_read_lat ss
use_test_net 21

ITERS=200

# perftest TOOL SIZE: one run of TOOL with messages of SIZE bytes.
perftest() {
	local tool=$1 size=$2 what

	what="$tool -s $size -n $ITERS"
	perftest_clock "$tool"
	next_port
	run_pair "$what" 30 \
		"$tool" -d rocemu0 -x 0 "${PERFTEST_CLOCK[@]}" -p "$PAIR_PORT" -s "$size" -n "$ITERS" \
		--client \
		"$tool" -d rocemu1 -x 0 "${PERFTEST_CLOCK[@]}" -p "$PAIR_PORT" -s "$size" -n "$ITERS" 127.0.0.1
	expect_both "local address: " "$what: local QP printed"
	expect_both "remote address: " "$what: peer's QP received"
	expect_client "^ *#bytes +#iterations " "$what: report header"
	expect_client "^ *$size +$ITERS +[0-9]+\.[0-9]+" "$what: report line"
	# ib_read_lat's server only serves the reads: it prints no table.
	if [ "$tool" != ib_read_lat ]; then
		expect_server "^ *#bytes +#iterations " "$what: report header"
		expect_server "^ *$size +$ITERS +[0-9]+\.[0-9]+" "$what: report line"
	fi
	expect_both "^-{40,}$" "$what: report closed"
}

perftests() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	perftest ib_send_bw 4096
	perftest ib_write_bw 4096
	perftest ib_read_bw 4096
	perftest ib_send_lat 64
	perftest ib_write_lat 64
	perftest ib_read_lat 64
}

for_each_backend perftests
