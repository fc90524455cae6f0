#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# 16384 RC QPs, the device's limit (tools/bench/qp_fill: perftest's queue
# depths, connected in pairs), reach RTS under one daemon, ibv_rc_pingpong
# on its second device still moves validated data alongside them, and the daemon's memory for them stays small: its
# VmRSS grows by at most 4 KiB a QP. The growth is what the daemon touched
# for those QPs (allocations and ring pages), the same from run to run; the
# bound leaves room for allocator and sanitizer overhead (about 1.5 KiB a QP
# is measured) and catches a QP costing what it did before (12 KiB: its
# requester and responder state in the QP, the doorbell page touched).
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
QP_FILL=$top_builddir/tools/bench/qp_fill
require_built "$QP_FILL"
require_programs ibv_rc_pingpong ss
use_test_net 152

QPS=16384
MAX_BYTES_PER_QP=4096

# vm_rss_kib PID: its resident set, in KiB.
vm_rss_kib() {
	awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"
}

qp_memory() {
	local fill_out=$WORK_DIR/fill-$BACKEND.out status_out=$WORK_DIR/status-$BACKEND.out
	local pid rss_before rss_after per_qp

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	# One client holds every QP of the device, twice its default share.
	export ROCEMU_LIMITS=qp=$QPS
	start_daemon
	pid=$(daemon_pid)
	[ -n "$pid" ] || fail "no daemon pid in rocemu status"
	rss_before=$(vm_rss_kib "$pid")

	# qp_fill keeps its QPs until release_held closes its stdin.
	start_held "$fill_out" 120 "$QP_FILL" -n "$QPS" -d rocemu0
	grep -qx "ready qps=$QPS" "$fill_out" || fail "qp_fill did not bring $QPS QPs to RTS"
	ok "$QPS RC QPs in RTS"
	echo "+ rocemu status >status.out" >>"$COMMANDS_LOG"
	run_with_timeout 30 "$ROCEMU" status >"$status_out" 2>&1 || fail "rocemu status failed: $(tail -n 1 "$status_out")"
	[ "$(grep -c '^  qp 0x[0-9a-f]\{6\} RC RTS ' "$status_out")" -eq "$QPS" ] ||
		fail "rocemu status lists $(grep -c '^  qp .* RC RTS ' "$status_out") RC QPs in RTS, not $QPS"
	ok "rocemu status lists each in RTS"

	rss_after=$(vm_rss_kib "$pid")
	per_qp=$(((rss_after - rss_before) * 1024 / QPS))
	echo "rocemud VmRSS: $rss_before KiB idle, $rss_after KiB with $QPS RC QPs in RTS ($per_qp bytes a QP)"
	[ "$per_qp" -le "$MAX_BYTES_PER_QP" ] ||
		fail "the daemon holds $per_qp bytes a QP, more than $MAX_BYTES_PER_QP"
	ok "at most $MAX_BYTES_PER_QP bytes a QP"

	next_port
	run_pair "ibv_rc_pingpong alongside $QPS QPs" 60 \
		ibv_rc_pingpong -d rocemu1 -g 0 -c -p "$PAIR_PORT" -s 65536 -n 20 \
		--client \
		ibv_rc_pingpong -d rocemu1 -g 0 -c -p "$PAIR_PORT" -s 65536 -n 20 127.0.0.1
	expect_both "^$((2 * 65536 * 20)) bytes in [0-9.]+ seconds = " "ibv_rc_pingpong moved all bytes"
	expect_neither "invalid data" "ibv_rc_pingpong data validated"

	release_held || fail "qp_fill failed when released"
	ok "qp_fill destroyed its QPs and exited 0"
	capture 10 "$ROCEMU" status || fail "rocemu status failed"
	expect_none "^  qp " "no QP is left"
}

for_each_backend qp_memory
