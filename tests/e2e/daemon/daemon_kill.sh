#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Programs that only poll notice when rocemud dies: SIGKILL of the daemon
# under a busy ibv_rc_pingpong (polling, no CQ events) and under
# ib_write_bw, both unmodified. The shim flushes their outstanding work
# with WR_FLUSH_ERR, so both ends exit with an error within 10 s.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_rc_pingpong ib_write_bw ss
use_test_net 52

EXIT_WITHIN_S=10

# wait_output FILE ERE PID: wait (at most 20 s) for a line of FILE matching ERE; false if PID exits first.
wait_output() {
	for _ in $(seq 200); do
		grep -Eq -- "$2" "$1" && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# killed_under WHAT READY_ERE ERROR_ERE SERVER_CMD... --client CLIENT_CMD...:
# both sides running, past READY_ERE, then SIGKILL of the daemon; each side
# must exit non-zero within EXIT_WITHIN_S, the client reporting ERROR_ERE.
killed_under() {
	local what=$1 ready=$2 error=$3 server=() client=() server_pid client_pid pid rc side killed

	shift 3
	while [ "$1" != --client ]; do
		server+=("$1")
		shift
	done
	shift
	client=("$@")
	next_port
	server+=(-p "$PAIR_PORT")
	client+=(-p "$PAIR_PORT" 127.0.0.1)
	echo "+ [$what] server: ${server[*]} &" >>"$COMMANDS_LOG"
	run_with_timeout 60 "$ROCEMU" run -- stdbuf -oL "${server[@]}" >"$SERVER_OUT" 2>&1 &
	server_pid=$!
	BACKGROUND_PIDS+=("$server_pid")
	wait_listening "$PAIR_PORT" "$server_pid" || fail "$what: the server never listened"
	echo "+ [$what] client: ${client[*]} &" >>"$COMMANDS_LOG"
	run_with_timeout 60 "$ROCEMU" run -- stdbuf -oL "${client[@]}" >"$CLIENT_OUT" 2>&1 &
	client_pid=$!
	BACKGROUND_PIDS+=("$client_pid")
	wait_output "$SERVER_OUT" "$ready" "$server_pid" && wait_output "$CLIENT_OUT" "$ready" "$client_pid" ||
		fail "$what: the pair never connected"
	sleep 1		# into the data loop
	kill -0 "$server_pid" 2>/dev/null && kill -0 "$client_pid" 2>/dev/null ||
		fail "$what: the pair ended before the daemon was killed"
	pid=$(daemon_pid)
	[ -n "$pid" ] || fail "$what: no pid of the daemon"
	echo "+ kill -KILL $pid (rocemud)" >>"$COMMANDS_LOG"
	kill -KILL "$pid"
	killed=$(date +%s%N)
	for side in client server; do
		pid=$([ $side = client ] && echo "$client_pid" || echo "$server_pid")
		wait_exit "$pid" "$EXIT_WITHIN_S" || kill "$pid" 2>/dev/null
		wait "$pid"
		rc=$?
		forget_pid "$pid"
		log_side "$side" "$([ $side = client ] && echo "$CLIENT_OUT" || echo "$SERVER_OUT")" "$rc"
		[ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] ||
			fail "$what: $side exit status $rc (143: still running $EXIT_WITHIN_S s after the kill)"
		ok "$what: $side exits with status $rc $((($(date +%s%N) - killed) / 1000000)) ms after the kill"
	done
	expect_client "$error" "$what: the client saw its work flushed"
	# The next pair gets a daemon of its own.
	start_daemon
}

daemon_kill() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	killed_under "ibv_rc_pingpong, polling" "remote address" "Work Request Flushed Error" \
		ibv_rc_pingpong -d rocemu0 -g 0 -n 100000000 \
		--client ibv_rc_pingpong -d rocemu1 -g 0 -n 100000000
	killed_under "ib_write_bw" "remote address" "[Cc]ompletion with error" \
		ib_write_bw -d rocemu0 -x 0 -F -D 60 \
		--client ib_write_bw -d rocemu1 -x 0 -F -D 60
}

for_each_backend daemon_kill
