#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Forged and truncated CM MADs of every attribute at rocemud's QP1 from a
# fake peer (tests/e2e/forged/cm_forged.c), while unmodified rping runs between
# two devices: the daemon drops and counts what fits no id or state
# (rx_cm_dropped), refuses what it cannot take, keeps a connection that
# forged MADs aim at, keeps answering `rocemu status`, and rping still
# completes its validated pings during and after.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
CM_FORGED=$top_builddir/tests/e2e/forged/cm_forged
require_built "$CM_FORGED"
require_programs rping
use_test_net 6
# Bound on the host (not the default private wire of loopback devices): its forger sends to the devices from outside the daemon.
export ROCEMU_WIRE=host

PAIR_READY=wait_cm_listening
PAIR_LOSSY=

# rping_pair WHAT: 100 pings validated, rocemu1 to rocemu0.
rping_pair() {
	next_port
	run_pair "$1" 30 rping -s -a "$(addr 1)" -p "$PAIR_PORT" -C 100 -V \
		--client rping -c -a "$(addr 1)" -I "$(addr 2)" -p "$PAIR_PORT" -C 100 -v -V
	[ "$(grep -c '^ping data: rdma-ping-' "$CLIENT_OUT")" -eq 100 ] ||
		fail "$1: the client shows $(grep -c '^ping data: rdma-ping-' "$CLIENT_OUT") of 100 pings"
}

cm_forged() {
	local out=$WORK_DIR/forged-$BACKEND.out pid rc

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	next_port
	echo "+ cm_forged $(addr 1) $(addr 9) rocemu $PAIR_PORT &" >>"$COMMANDS_LOG"
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} run_with_timeout 60 "$ROCEMU" run -- \
		"$CM_FORGED" "$(addr 1)" "$(addr 9)" "$ROCEMU" "$PAIR_PORT" >"$out" 2>&1 &
	pid=$!
	BACKGROUND_PIDS+=("$pid")
	rping_pair "rping while MADs are forged"
	wait "$pid"
	rc=$?
	forget_pid "$pid"
	cat "$out" >>"$COMMANDS_LOG"
	grep "^FAIL" "$out"
	[ "$rc" -eq 0 ] && grep -q "^0 failed$" "$out" || fail "cm_forged: exit status $rc"
	ok "cm_forged: $(grep -c '^ok' "$out") checks passed"
	rping_pair "rping after the forged MADs"
}

for_each_backend cm_forged
