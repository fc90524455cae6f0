#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A signal without SA_RESTART ends ibv_get_cq_event, ibv_get_async_event
# and rdma_get_cm_event with EINTR, as on the kernel's files
# (tests/e2e/verbs/wait_eintr.c); qperf's event-driven loops end that way.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
WAIT_EINTR=$top_builddir/tests/e2e/verbs/wait_eintr
require_built "$WAIT_EINTR"
use_test_net 10

wait_eintr() {
	ROCEMU_DEVICES="rocemu0=$(addr 1)"
	export ROCEMU_DEVICES
	start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} capture 60 "$ROCEMU" run -- \
		"$WAIT_EINTR" rocemu0 || fail "wait_eintr failed"
	expect_checks_passed
}

for_each_backend wait_eintr
