#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified perftest over the RDMA CM (-R): ib_send_bw, ib_write_bw,
# ib_read_lat and ib_send_bw -c UD (SIDR), short runs with their report.
# perftest's client connects twice: once for its exchange, then for the
# test's QP as soon as the server says it will listen, which may come
# before the server's rdma_listen. The kernel's CM refuses such a REQ
# (REJECTED, status 8) and perftest before 26.04 cannot retry (its retry
# reuses destroyed ids), so on hardware it works by the server winning
# the race. Here the daemon drops requests nobody listens for
# (ROCEMU_CM_UNLISTENED=drop) and the client's CM resends them every
# second (15 times), so the second connection lands once the server
# listens, whoever is first; an rping client started before its server
# shows it.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ib_send_bw ib_write_bw ib_read_lat rping
use_test_net 246
PAIR_READY=wait_cm_listening
PAIR_LOSSY=
ITERS=200

# perftest_cm WHAT_SIZE TOOL [OPTION...]: one run of TOOL -R with messages of SIZE bytes.
perftest_cm() {
	local size=$1 tool=$2 what

	shift 2
	what="$tool -R $* -s $size -n $ITERS"
	perftest_clock "$tool"
	PAIR_PORT=$((30200 + BACKEND_INDEX * 50 + NEXT_CM_PORT))
	NEXT_CM_PORT=$((NEXT_CM_PORT + 1))
	run_pair "$what" 30 "$tool" -R "$@" "${PERFTEST_CLOCK[@]}" -d rocemu0 -p "$PAIR_PORT" -s "$size" -n "$ITERS" \
		--client "$tool" -R "$@" "${PERFTEST_CLOCK[@]}" -p "$PAIR_PORT" -s "$size" -n "$ITERS" "$(addr 1)"
	expect_client "^ *$size +$ITERS +[0-9]+\.[0-9]+" "$what: report line"
	expect_both "Data ex. method : rdma_cm" "$what: data exchanged through the RDMA CM"
}

# early_client: rping's client connects before anyone listens; its REQ is resent
# until the server listens, then the 10 pings go through.
early_client() {
	local port=$((30240 + BACKEND_INDEX * 50)) out=$WORK_DIR/early-$BACKEND.out pid status

	echo "+ rping -c -a $(addr 1) -p $port -C 10 -v & (before the server)" >>"$COMMANDS_LOG"
	run_with_timeout 30 "$ROCEMU" run -- rping -c -a "$(addr 1)" -p "$port" -C 10 -v >"$out" 2>&1 &
	pid=$!
	BACKGROUND_PIDS+=("$pid")
	for _ in $(seq 100); do
		run_with_timeout 5 "$ROCEMU" status 2>/dev/null | grep -q ":$port cm REQ_SENT" && break
		sleep 0.1
	done
	run_with_timeout 5 "$ROCEMU" status 2>/dev/null | grep -q ":$port cm REQ_SENT" ||
		fail "rping's client sent no REQ to port $port"
	capture 30 "$ROCEMU" run -- rping -s -a "$(addr 1)" -p "$port" -C 10 || fail "rping server failed"
	wait "$pid" || { status=$?; cat "$out" >>"$COMMANDS_LOG"; fail "rping's client, early, exited with status $status"; }
	forget_pid "$pid"
	OUT=$out expect "^ping data: rdma-ping-9: " "a REQ before the listen is resent, not refused: 10 pings"
}

perftests_cm() {
	NEXT_CM_PORT=0
	ROCEMU_DEVICES="rocemu0=$(addr 1)"
	export ROCEMU_DEVICES
	ROCEMU_CM_UNLISTENED=drop ROCEMU_CM_TIMEOUT_MS=1000 start_daemon
	perftest_cm 4096 ib_send_bw
	perftest_cm 4096 ib_write_bw
	perftest_cm 64 ib_read_lat
	perftest_cm 1024 ib_send_bw -c UD
	early_client
}

for_each_backend perftests_cm
