#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# librpma's public API over rocemu (tests/e2e/apps/rpma.c): a connection through
# the RDMA CM with the server's memory region in its private data, then
# rpma_read, rpma_write, rpma_flush (visibility) and a read back, data
# checked on both sides; then what librpma's example
# 12-receive-completion-queue does, a counter sent back and forth for 50
# rounds over a connection with a receive CQ of its own, each completion
# taken by one rpma_cq_wait that must not come before it, and the client's
# last message sent just before it disconnects.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
RPMA=$top_builddir/tests/e2e/apps/rpma
[ -x "$RPMA" ] || skip "tests/e2e/apps/rpma is not built (Debian package librpma-dev)"
use_test_net 245
PAIR_READY=wait_cm_listening
PAIR_LOSSY=

rpma_pair() {
	local what

	ROCEMU_DEVICES="rocemu0=$(addr 1)"
	export ROCEMU_DEVICES
	start_daemon
	PAIR_PORT=$((29900 + BACKEND_INDEX * 50))
	what="librpma read, write, flush on $(addr 1):$PAIR_PORT"
	# Our own program: leaks count here (rocemu run turns them off for distribution programs).
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} run_pair "$what" 30 "$RPMA" server "$(addr 1)" "$PAIR_PORT" \
		--client "$RPMA" client "$(addr 1)" "$PAIR_PORT"
	expect_both "^0 failed$" "$what: every check passed"
	expect_client "^ok: client: reading back gets the bytes written$" "$what: the written bytes read back"
	expect_server "^ok: server: its region holds the client's 4096 written bytes$" "$what: the server's region"

	PAIR_PORT=$((PAIR_PORT + 1))
	what="librpma send and receive, a receive CQ, on $(addr 1):$PAIR_PORT"
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} run_pair "$what" 30 "$RPMA" rcq-server "$(addr 1)" "$PAIR_PORT" \
		--client "$RPMA" rcq-client "$(addr 1)" "$PAIR_PORT" 50
	expect_both "^0 failed$" "$what: every check passed"
	expect_client "^ok: rcq-client: 50 of 50 rounds, each completion found by one rpma_cq_wait" \
		"$what: every round"
	expect_client "^ok: rcq-client: the counter went from 7 to 57$" "$what: the counter"
	expect_server "^ok: rcq-server: 50 rounds, each counter the one expected, then the client's last message$" \
		"$what: the server got every counter and the last message"
}

for_each_backend rpma_pair
