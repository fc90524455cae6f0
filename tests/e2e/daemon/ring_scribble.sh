#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# One program scribbles over its own rings and doorbell records
# (tests/e2e/daemon/ring_scribble.c, 100k scribbles, seeded: SCRIBBLE_SEED, else
# the clock) while unmodified clients share the daemon with it:
# ibv_rc_pingpong -c (data validated) and ib_write_bw, each pair run again
# and again until the scribbler is done, every run exits 0. The daemon
# answers `rocemu status` throughout (polled every 0.2 s, each answer
# within 5 s), the scribbler's QPs end each round in ERR, and nothing
# reports a sanitizer error.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
RING_SCRIBBLE=$top_builddir/tests/e2e/daemon/ring_scribble
require_built "$RING_SCRIBBLE"
require_programs ibv_rc_pingpong ib_write_bw ss
use_test_net 261

SCRIBBLES=100000
SEED=${SCRIBBLE_SEED:-$(date +%s)}

# status_poll FILE: `rocemu status` every 0.2 s until $STOP exists, one
# line each into FILE: the milliseconds it took, or FAIL.
status_poll() {
	local start

	while [ ! -e "$STOP" ]; do
		start=$(date +%s%N)
		if run_with_timeout 5 "$ROCEMU" status >/dev/null 2>&1; then
			echo $((($(date +%s%N) - start) / 1000000))
		else
			echo FAIL
		fi
		sleep 0.2
	done >"$1"
}

# traffic_loop NAME PORT SERVER_CMD... --client CLIENT_CMD...: the pair
# under `rocemu run` again and again until $STOP exists (once at least);
# the last line of $WORK_DIR/NAME.result is "ok RUNS" or "FAIL why", and
# $WORK_DIR/NAME.server and .client hold the last run's output.
traffic_loop() {
	local name=$1 port=$2 server=() client=() runs=0 spid result=$WORK_DIR/$1.result

	shift 2
	while [ "$1" != --client ]; do
		server+=("$1")
		shift
	done
	shift
	client=("$@")
	while [ "$runs" -eq 0 ] || [ ! -e "$STOP" ]; do
		run_with_timeout 60 "$ROCEMU" run -- "${server[@]}" >"$WORK_DIR/$name.server" 2>&1 &
		spid=$!
		if ! wait_listening "$port" "$spid"; then
			kill "$spid" 2>/dev/null
			echo "FAIL run $runs: the server never listened" >>"$result"
			return
		fi
		if ! run_with_timeout 60 "$ROCEMU" run -- "${client[@]}" >"$WORK_DIR/$name.client" 2>&1; then
			kill "$spid" 2>/dev/null
			echo "FAIL run $runs: the client failed" >>"$result"
			return
		fi
		if ! wait "$spid"; then
			echo "FAIL run $runs: the server failed" >>"$result"
			return
		fi
		if grep -q "invalid data" "$WORK_DIR/$name.server" "$WORK_DIR/$name.client"; then
			echo "FAIL run $runs: invalid data" >>"$result"
			return
		fi
		runs=$((runs + 1))
	done
	echo "ok $runs" >>"$result"
}

# traffic_result NAME WHAT: the loop NAME passed; its last run's output goes to the log.
traffic_result() {
	local result

	result=$(tail -n 1 "$WORK_DIR/$1.result" 2>/dev/null)
	log_side "$1 server" "$WORK_DIR/$1.server" -
	log_side "$1 client" "$WORK_DIR/$1.client" -
	case $result in
	ok*) ok "$2: ${result#ok } runs beside the scribbler, every one exit 0" ;;
	*) fail "$2: ${result:-no result}" ;;
	esac
}

ring_scribble() {
	local pp_port bw_port loops=() poll_pid statuses=$WORK_DIR/status-$BACKEND

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	STOP=$WORK_DIR/stop-$BACKEND
	ROCEMU_LOG=info start_daemon
	next_port
	pp_port=$PAIR_PORT
	next_port
	bw_port=$PAIR_PORT
	traffic_loop pingpong "$pp_port" \
		ibv_rc_pingpong -d rocemu0 -g 0 -c -p "$pp_port" -s 4096 -n 200 \
		--client \
		ibv_rc_pingpong -d rocemu1 -g 0 -c -p "$pp_port" -s 4096 -n 200 127.0.0.1 &
	loops+=($!)
	traffic_loop write_bw "$bw_port" \
		ib_write_bw -d rocemu0 -x 0 -F -p "$bw_port" -s 4096 -n 1000 \
		--client \
		ib_write_bw -d rocemu1 -x 0 -F -p "$bw_port" -s 4096 -n 1000 127.0.0.1 &
	loops+=($!)
	status_poll "$statuses" &
	poll_pid=$!
	BACKGROUND_PIDS+=("${loops[@]}" "$poll_pid")
	capture 180 "$ROCEMU" run -- "$RING_SCRIBBLE" rocemu0 "$SEED" "$SCRIBBLES"
	local rc=$?
	touch "$STOP"
	wait "${loops[@]}" "$poll_pid"
	for pid in "${loops[@]}" "$poll_pid"; do
		forget_pid "$pid"
	done
	[ "$rc" -eq 0 ] || fail "ring_scribble (seed $SEED) failed"
	expect_checks_passed "ring_scribble, seed $SEED"
	grep -E '^(seed|events|ok: [0-9]+ QPs taken)' "$OUT"
	traffic_result pingpong "ibv_rc_pingpong -c"
	traffic_result write_bw "ib_write_bw"
	! grep -q FAIL "$statuses" || fail "rocemu status got no answer within 5 s ($(grep -c FAIL "$statuses") times)"
	ok "rocemu status answered $(wc -l <"$statuses") times, the slowest in $(sort -n "$statuses" | tail -n 1) ms"
	kill -0 "$DAEMON_PID" 2>/dev/null || fail "rocemud is gone"
	! grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error' "$ROCEMU_RUNTIME_DIR/rocemud.log" ||
		fail "the daemon reports a sanitizer error"
	ok "rocemud runs, no sanitizer report"
}

for_each_backend ring_scribble
