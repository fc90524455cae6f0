#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# RDMA CM error paths and endings (tests/e2e/cm/cm_errors.c, librdmacm's API):
# a reject with private data, a connect to a port nobody listens on
# (REJECTED, invalid service ID), a REQ to an address where no daemon
# answers (UNREACHABLE after the CM's retries, within bounded time), a
# disconnect from either side (DISCONNECTED on both, then TIMEWAIT_EXIT);
# binds to addresses of no device (loopback: the wildcard; ENODEV; EADDRNOTAVAIL);
# ids of RDMA_PS_IB with a QP type of their own: a UC connection carrying a
# SEND, a raw packet id whose rdma_connect is EINVAL;
# rocemud killed under connected ids (DEVICE_REMOVAL for each, no hang).
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
CM_ERRORS=$top_builddir/tests/e2e/cm/cm_errors
require_built "$CM_ERRORS"
use_test_net 241

cm_errors() {
	local port=$((29600 + BACKEND_INDEX * 100))

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	# Short CM timeouts, so that 1 + 3 tries of 100 ms end the REQ to nowhere in 0.4 s.
	ROCEMU_CM_TIMEOUT_MS=100 ROCEMU_CM_RETRIES=3 start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} capture 60 "$ROCEMU" run -- \
		"$CM_ERRORS" "$(addr 1)" "$(addr 2)" "$(addr 9)" "$port" 400 || fail "cm_errors failed"
	expect_checks_passed
	daemon_dies "$port"
}

# daemon_dies PORT: rocemud killed under connected ids: DEVICE_REMOVAL for each, no hang.
daemon_dies() {
	local out=$WORK_DIR/removal-$BACKEND.out pid rc

	echo "+ cm_errors ... --daemon-dies &" >>"$COMMANDS_LOG"
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} run_with_timeout 30 "$ROCEMU" run -- \
		"$CM_ERRORS" "$(addr 1)" "$(addr 2)" "$(addr 9)" "$1" 0 --daemon-dies >"$out" 2>&1 &
	pid=$!
	BACKGROUND_PIDS+=("$pid")
	wait_ready "$out" "$pid" 20 || { cat "$out" >>"$COMMANDS_LOG"; fail "no connection before the kill"; }
	echo "+ kill -KILL $(daemon_pid) (rocemud)" >>"$COMMANDS_LOG"
	kill -KILL "$(daemon_pid)"
	wait "$pid"
	rc=$?
	forget_pid "$pid"
	cat "$out" >>"$COMMANDS_LOG"
	[ "$rc" -eq 0 ] && grep -q "^0 failed$" "$out" ||
		fail "daemon killed: cm_errors --daemon-dies exit status $rc"
	ok "daemon killed: DEVICE_REMOVAL for each id, rdma_destroy_id returns ($(grep -c '^ok: ' "$out") checks)"
}

for_each_backend cm_errors
