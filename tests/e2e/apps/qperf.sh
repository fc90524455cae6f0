#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified qperf with -cm1 (its RDMA connections through the RDMA CM):
# rc_bw, rc_rdma_write_bw, rc_lat and rc_rdma_read_lat, one second each
# (both ends on rocemu0: a destination of the daemon is its own source).
# rc_lat waits for completions with ibv_get_cq_event and ends its loop when
# its timer's SIGALRM interrupts that wait (EINTR), as on the kernel's file
# (tests/e2e/verbs/wait_eintr.sh). ud_lat makes no use of the CM: qperf's
# rd_params uses it for RC only, so ud_lat exchanges LIDs over its socket
# and creates its address handle without a GRH, which mlx5 refuses on a
# RoCE port with EINVAL (mlx5_create_ah: no is_global on Ethernet; the
# kernel's rdma_check_ah_attr likewise): qperf's ud tests cannot run on a
# ConnectX RoCE port, and the test checks that rocemu refuses the same way.
# qperf's exchanges get 20 s (-to), not 5, for a loaded machine. qperf
# 0.4.11's server also calls rdma_destroy_qp on its listening id at the end
# of every test (a NULL QP; fixed upstream by 83bc16e), after the results
# are sent.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs qperf
use_test_net 243

qperf_cm() {
	local server_pid test

	ROCEMU_DEVICES="rocemu0=$(addr 1)"
	export ROCEMU_DEVICES
	# qperf 0.4.11 tells its client the port before it listens (fixed upstream by 118a571):
	# a REQ before the listen is dropped and resent, not refused (see perftest_cm.sh).
	ROCEMU_CM_UNLISTENED=drop ROCEMU_CM_TIMEOUT_MS=200 start_daemon
	next_port
	echo "+ qperf -lp $PAIR_PORT &" >>"$COMMANDS_LOG"
	run_with_timeout 60 "$ROCEMU" run -- qperf -lp "$PAIR_PORT" >"$SERVER_OUT" 2>&1 &
	server_pid=$!
	BACKGROUND_PIDS+=("$server_pid")
	wait_listening "$PAIR_PORT" "$server_pid" || fail "the qperf server never listened"
	for test in rc_bw rc_rdma_write_bw; do
		capture 40 "$ROCEMU" run -- qperf -lp "$PAIR_PORT" -cm1 -t 1 -to 20 "$(addr 1)" "$test" ||
			fail "qperf -cm1 $test failed"
		expect "^ +bw += +[0-9.]+ [KMG]B/sec$" "qperf -cm1 $test: $(grep -Eo '[0-9.]+ [KMG]B/sec' "$OUT")"
	done
	for test in rc_lat rc_rdma_read_lat; do
		capture 40 "$ROCEMU" run -- qperf -lp "$PAIR_PORT" -cm1 -t 1 -to 20 "$(addr 1)" "$test" ||
			fail "qperf -cm1 $test failed"
		expect "^ +latency += +[0-9.]+ [mun]?s$" "qperf -cm1 $test: $(grep -Eo '[0-9.]+ [mun]?s$' "$OUT")"
	done
	! capture 40 "$ROCEMU" run -- qperf -lp "$PAIR_PORT" -cm1 -t 1 -to 20 "$(addr 1)" ud_lat ||
		fail "qperf ud_lat created an address handle without a GRH on RoCE"
	kill "$server_pid" 2>/dev/null
	wait "$server_pid"
	forget_pid "$server_pid"
	# Whichever end tries first is refused; when that is the server, the
	# client only hears "server: " and the reason is the server's to print.
	cat "$SERVER_OUT" >>"$OUT"
	if ! grep -q "failed to create address handle: Invalid argument" "$OUT"; then
		expect "^server: " "qperf ud_lat: the server gave up first"
	fi
	ok "qperf ud_lat: an address handle without a GRH is refused, as mlx5 on RoCE"
}

for_each_backend qperf_cm
