#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# UD QPs and address handles with unmodified clients, rocemu0 against
# rocemu1 as two processes: ibv_ud_pingpong with its data validated (-c),
# perftest ib_send_bw and ib_send_lat with -c UD, and again with --use-srq
# (the receives through a shared receive queue, none dropped); the capture
# of both devices decodes in tshark as InfiniBand UD with no malformed
# frame, every datagram from a source port in 0xC000-0xFFFF to 4791.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_ud_pingpong ib_send_bw ib_send_lat ss
use_test_net 130

# ud_pingpong SIZE ITERS [OPTION...]
ud_pingpong() {
	local size=$1 iters=$2 what

	shift 2
	what="ibv_ud_pingpong${*:+ $*} -s $size -n $iters"
	next_port
	run_pair "$what" 30 \
		ibv_ud_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" -s "$size" -n "$iters" "$@" \
		--client \
		ibv_ud_pingpong -d rocemu1 -g 0 -c -p "$PAIR_PORT" -s "$size" -n "$iters" "$@" 127.0.0.1
	expect_both "^$((2 * size * iters)) bytes in [0-9.]+ seconds = " "$what: all bytes moved"
	expect_both "^$iters iters in [0-9.]+ seconds = " "$what: all iterations"
	expect_neither "invalid data" "$what: data validated"
}

# perftest_ud TOOL SIZE [OPTION...]: a short UD run that reports on both sides.
perftest_ud() {
	local tool=$1 size=$2 iters=200 what

	shift 2
	what="$tool -c UD${*:+ $*} -s $size -n $iters"
	perftest_clock "$tool"
	next_port
	run_pair "$what" 30 \
		"$tool" -d rocemu0 -x 0 "${PERFTEST_CLOCK[@]}" -c UD "$@" -p "$PAIR_PORT" -s "$size" -n "$iters" \
		--client \
		"$tool" -d rocemu1 -x 0 "${PERFTEST_CLOCK[@]}" -c UD "$@" -p "$PAIR_PORT" -s "$size" -n "$iters" 127.0.0.1
	expect_both "remote address: " "$what: peer's QP received"
	expect_client "^ *$size +$iters +[0-9]+\.[0-9]+" "$what: report line"
	expect_server "^ *$size +$iters +[0-9]+\.[0-9]+" "$what: report line"
}

# ud_drops: the datagrams both devices dropped for want of a receive or a receiving QP.
ud_drops() {
	run_with_timeout 10 "$ROCEMU" stats |
		awk '$2 == "out_of_buffer" || $2 == "rx_ud_dropped" { n += $3 } END { print n + 0 }'
}

# perftest_ud_srq TOOL SIZE: perftest_ud with --use-srq; both say they used
# the SRQ and no datagram was dropped.
perftest_ud_srq() {
	local before

	before=$(ud_drops)
	perftest_ud "$1" "$2" --use-srq
	expect_both "Using SRQ +: ON" "$1 -c UD --use-srq: the receives come from an SRQ"
	[ "$(ud_drops)" = "$before" ] || fail "$1 -c UD --use-srq: $(($(ud_drops) - before)) datagrams dropped"
	ok "$1 -c UD --use-srq: no datagram dropped"
}

# expect_ud_ports FILE: every frame to 4791 from a port in 0xC000-0xFFFF (mlx5 draws one per AH).
expect_ud_ports() {
	local other

	capture 30 tshark -r "$1" -T fields -e udp.srcport -e udp.dstport ||
		fail "tshark cannot read the ports of $1"
	other=$(awk '$1 ~ /^[0-9]+$/ && ($2 != 4791 || $1 < 49152)' "$OUT" | wc -l)
	[ "$other" -eq 0 ] || fail "$1: $other frames not from 0xC000-0xFFFF to 4791"
	ok "$(basename "$1"): every frame from a port in 0xC000-0xFFFF to 4791"
}

ud_clients() {
	local pcap_dir=$WORK_DIR/pcap-$BACKEND

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info ROCEMU_PCAP=$pcap_dir start_daemon
	ud_pingpong 2048 100
	ud_pingpong 1 100
	ud_pingpong 1024 100 -e
	perftest_ud ib_send_bw 1024
	perftest_ud ib_send_lat 64
	perftest_ud_srq ib_send_bw 1024
	perftest_ud_srq ib_send_lat 64
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	if command -v tshark >/dev/null; then
		# UD Send Only (100), with immediate (101)
		expect_decoded "$pcap_dir/rocemu0.pcap" '^eth:.*:infiniband.*[[:space:]](100|101)$' "UD Send"
		expect_decoded "$pcap_dir/rocemu1.pcap" '^eth:.*:infiniband.*[[:space:]](100|101)$' "UD Send"
		expect_ud_ports "$pcap_dir/rocemu0.pcap"
		expect_ud_ports "$pcap_dir/rocemu1.pcap"
	else
		echo "skip the capture check: tshark is not installed"
	fi
}

for_each_backend ud_clients
