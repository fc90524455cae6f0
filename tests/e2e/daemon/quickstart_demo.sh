#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The demo of `./quickstart demo` (tools/demo) on this build, with another
# daemon already running in the default runtime directory: the demo runs a
# daemon of its own in a private directory, so its two devices serve the
# pingpong (data checked) and each port's capture decodes. With TCP port
# taken by a pingpong server left running, or a device address held by the
# other daemon, the demo says by what and exits 1.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_devinfo ibv_rc_pingpong ss tshark
use_test_net 82
DEMO=$top_srcdir/tools/demo

# demo ARGS...: tools/demo ARGS on this build, under a timeout.
demo() {
	capture 90 env -u ROCEMU_RUNTIME_DIR "$DEMO" "$@" "$top_builddir"
}

quickstart_demo() {
	local other_dir stale_pid

	unset ROCEMU_WIRE

	# Another daemon in the default runtime directory, with one device of its own.
	export XDG_RUNTIME_DIR=$WORK_DIR/xdg-$BACKEND
	other_dir=$XDG_RUNTIME_DIR/rocemu
	mkdir -m 0700 "$XDG_RUNTIME_DIR" "$other_dir" || fail "mkdir $other_dir"
	RUNTIME_DIRS+=("$other_dir")
	ROCEMU_RUNTIME_DIR=$other_dir ROCEMU_DEVICES="rocemu0=$(addr 3)" start_daemon

	next_port
	demo --addresses "$(addr 1),$(addr 2)" --port "$PAIR_PORT" --capture "$WORK_DIR/capture-$BACKEND" ||
		fail "the demo failed beside another daemon"
	expect_fixed "::ffff:$(addr 1), RoCE v2" "ibv_devinfo shows the demo's rocemu0, not the other daemon's"
	expect "^13107200 bytes in [0-9.]+ seconds = " "ibv_rc_pingpong moved every byte (data checked)"
	expect "^100 iters in [0-9.]+ seconds = " "ibv_rc_pingpong ran every iteration"
	expect "RoCE|InfiniBand|RRoCE" "the capture decodes"
	expect_none "Malformed" "the frames shown are whole, none malformed"
	[ -z "$(ls -A "$XDG_RUNTIME_DIR" | grep -v '^rocemu$')" ] || fail "the demo left files in the default runtime directory"
	ROCEMU_RUNTIME_DIR=$other_dir capture 10 "$ROCEMU" status || fail "the other daemon stopped"
	expect_none "^client " "the other daemon served none of the demo's programs"

	# A pingpong server left running on the demo's TCP port.
	next_port
	echo "+ [stale server] ibv_rc_pingpong -p $PAIR_PORT &" >>"$COMMANDS_LOG"
	ROCEMU_RUNTIME_DIR=$other_dir run_with_timeout 60 "$ROCEMU" run -- \
		ibv_rc_pingpong -d rocemu0 -g 0 -p "$PAIR_PORT" >/dev/null 2>&1 &
	stale_pid=$!
	BACKGROUND_PIDS+=("$stale_pid")
	wait_listening "$PAIR_PORT" "$stale_pid" || fail "the stale pingpong server never listened"
	demo --addresses "$(addr 1),$(addr 2)" --port "$PAIR_PORT" --capture "$WORK_DIR/capture-$BACKEND" &&
		fail "the demo ran with its TCP port taken"
	expect_fixed "quickstart: TCP port $PAIR_PORT, which ibv_rc_pingpong needs, is taken:" "the demo says its port is taken"
	expect_fixed "ibv_rc_pingpong" "... and by what"
	kill "$stale_pid"
	wait "$stale_pid"
	forget_pid "$stale_pid"

	# A device address held by the other daemon, both bound on the host (loopback
	# devices are not by default: each daemon's live in a namespace of its own).
	stop_daemon "$other_dir"
	export ROCEMU_WIRE=host
	ROCEMU_RUNTIME_DIR=$other_dir ROCEMU_DEVICES="rocemu0=$(addr 3)" start_daemon
	next_port
	demo --addresses "$(addr 4),$(addr 3)" --port "$PAIR_PORT" --capture "$WORK_DIR/capture-$BACKEND" &&
		fail "the demo ran with an address taken"
	expect_fixed "$(addr 3):4791 is already in use by pid $(ROCEMU_RUNTIME_DIR=$other_dir daemon_pid) (rocemud)" \
		"the demo says which address is taken, and by what"
	expect_fixed "quickstart: the demo's devices need UDP port 4791 on $(addr 4) and $(addr 3)" \
		"... and what to do"
}

for_each_backend quickstart_demo
