#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A client that ftruncates every memfd the daemon hands it, to 0 and to a
# page more (tests/e2e/mem/memfd_truncate.c: the context page, a CQ, an SRQ, a
# QP's rings, device memory), then makes the daemon read them: each is
# sealed (EPERM) and keeps its size, the daemon lives and answers `rocemu
# status`, and ibv_rc_pingpong between two other processes moves and
# checks its data while the client holds its objects.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
MEMFD_TRUNCATE=$top_builddir/tests/e2e/mem/memfd_truncate
require_built "$MEMFD_TRUNCATE"
require_programs ibv_rc_pingpong ss
use_test_net 260

memfd_truncate() {
	local out=$WORK_DIR/memfd_truncate-$BACKEND.out what

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	start_held "$out" 60 "$MEMFD_TRUNCATE" "$ROCEMU_RUNTIME_DIR" ||
		fail "memfd_truncate did not get ready"
	# The daemon has read the rings by now: its doorbell scan runs at once on a kick.
	sleep 0.5
	kill -0 "$DAEMON_PID" 2>/dev/null || fail "rocemud died after the ftruncates"
	daemon_answers || fail "rocemud does not answer rocemu status"
	ok "rocemud lives and answers rocemu status after the ftruncates"
	what="ibv_rc_pingpong -c beside the client"
	next_port
	run_pair "$what" 30 \
		ibv_rc_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" -s 4096 -n 100 \
		--client \
		ibv_rc_pingpong -d rocemu1 -g 0 -c -p "$PAIR_PORT" -s 4096 -n 100 127.0.0.1
	expect_both "^$((2 * 4096 * 100)) bytes in [0-9.]+ seconds = " "$what: all bytes moved"
	expect_neither "invalid data" "$what: data validated"
	release_held || { cat "$out" >>"$COMMANDS_LOG"; fail "memfd_truncate failed"; }
	cat "$out" >>"$COMMANDS_LOG"
	OUT=$out expect_checks_passed "memfd_truncate"
	kill -0 "$DAEMON_PID" 2>/dev/null || fail "rocemud is gone"
	! grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error' "$ROCEMU_RUNTIME_DIR/rocemud.log" ||
		fail "the daemon reports a sanitizer error"
	ok "rocemud runs, no sanitizer report"
}

for_each_backend memfd_truncate
