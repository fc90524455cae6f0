#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# QP states and async events (tests/e2e/rc/rc_events.c): RNR exceeded and
# recovered, COMM_EST, SQD drain, CQ overrun, responder access error
# between two devices; retry exceeded when the peer's daemon (another
# runtime dir) is killed; DEVICE_FATAL when our daemon is killed;
# PORT_ERR/PORT_ACTIVE on `rocemu down/up`.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RC_EVENTS=$top_builddir/tests/e2e/rc/rc_events
require_built "$RC_EVENTS"
use_test_net 31
# Bound on the host (not the default private wire of loopback devices): a second daemon's device talks to the first's.
export ROCEMU_WIRE=host

# events_run WHAT ARGS...: rc_events ARGS under `rocemu run` and a timeout; every check passed.
events_run() {
	local what=$1

	shift
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} capture 60 "$ROCEMU" run -- "$RC_EVENTS" "$@" || fail "rc_events $* failed"
	expect_checks_passed "$what"
}

# other_daemon DIR DEVICES: a daemon of its own in the new runtime dir DIR.
other_daemon() {
	mkdir -m 0700 "$1" || fail "mkdir $1"
	RUNTIME_DIRS+=("$1")
	ROCEMU_RUNTIME_DIR=$1 ROCEMU_DEVICES=$2 start_daemon
}

rc_events() {
	local peer_dir fatal_dir pid

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	events_run "two devices" local rocemu0 rocemu1
	events_run "port down/up" port rocemu0 rocemu1 "$ROCEMU"

	# The peer's device lives in a second daemon, which the program kills.
	peer_dir=$WORK_DIR/peer-$BACKEND
	ROCEMU_LOG=info other_daemon "$peer_dir" "rocemu1=$(addr 3)"
	pid=$(ROCEMU_RUNTIME_DIR=$peer_dir daemon_pid)
	[ -n "$pid" ] || fail "no pid of the peer daemon"
	events_run "retry exceeded" retry rocemu0 rocemu1 "$peer_dir" "$pid"

	# Our own daemon dies under the program.
	fatal_dir=$WORK_DIR/fatal-$BACKEND
	other_daemon "$fatal_dir" "rocemu0=$(addr 4)"
	pid=$(ROCEMU_RUNTIME_DIR=$fatal_dir daemon_pid)
	[ -n "$pid" ] || fail "no pid of the daemon to kill"
	ROCEMU_RUNTIME_DIR=$fatal_dir events_run "device fatal" fatal rocemu0 "$pid"
}

for_each_backend rc_events
