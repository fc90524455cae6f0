#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# `rocemu status` prints a report of any size: with 16384 QPs (about
# 450 KiB, more than one control message holds) every QP is listed once,
# and the daemon still answers `rocemu stats` and `rocemu status` after.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
MANY_QPS=$top_builddir/tests/e2e/daemon/many_qps
require_built "$MANY_QPS"
use_test_net 81

QPS=16384

status_many_qps() {
	local holder_out=$WORK_DIR/holder-$BACKEND.out status_out=$WORK_DIR/status-$BACKEND.out

	export ROCEMU_DEVICES="rocemu0=$(addr 1)"
	# One client holds every QP of the device, twice its default share.
	export ROCEMU_LIMITS=qp=$QPS
	start_daemon
	# The holder keeps its QPs until release_held closes its stdin.
	start_held "$holder_out" 120 "$MANY_QPS" rocemu0 "$QPS"
	grep -q "^ready $QPS$" "$holder_out" || fail "many_qps did not create $QPS QPs"
	ok "$QPS QPs created"

	echo "+ rocemu status >status.out" >>"$COMMANDS_LOG"
	run_with_timeout 30 "$ROCEMU" status >"$status_out" 2>"$OUT" || { cat "$OUT" >>"$COMMANDS_LOG"; fail "rocemu status failed: $(cat "$OUT")"; }
	ok "rocemu status answered $(wc -c <"$status_out") bytes"
	[ "$(grep -c '^  qp 0x[0-9a-f]\{6\} RC RESET pd [0-9]*$' "$status_out")" -eq "$QPS" ] ||
		fail "rocemu status lists $(grep -c '^  qp ' "$status_out") QPs, not $QPS"
	ok "every one of the $QPS QPs listed"
	[ "$(grep '^  qp ' "$status_out" | sort -u | wc -l)" -eq "$QPS" ] || fail "a QP is listed twice"
	ok "each QP listed once"
	[ "$(head -n 1 "$status_out" | cut -d' ' -f1)" = rocemud ] || fail "the report does not start with the daemon line"
	[ "$(grep -c '^client pid ' "$status_out")" -eq 1 ] || fail "not one client block"
	ok "one report: daemon line first, one client block"

	capture 10 "$ROCEMU" stats || fail "rocemu stats failed"
	expect "^rocemu0 port_xmit_packets 0$" "rocemu stats still answers"

	release_held || fail "many_qps failed when released"
	capture 10 "$ROCEMU" status || fail "rocemu status failed"
	expect_none "^  qp " "the QPs are gone with their process"
}

for_each_backend status_many_qps
