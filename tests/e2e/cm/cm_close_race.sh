#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# An event channel closed while another thread is inside rdma_get_cm_event
# (rping's main thread under its CM thread): the call in progress returns
# its event, as on the kernel's file, never EBADF, and the file goes with
# it (tests/e2e/cm/cm_close_race.c holds the window open deterministically).
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
CM_CLOSE_RACE=$top_builddir/tests/e2e/cm/cm_close_race
require_built "$CM_CLOSE_RACE"
use_test_net 5

cm_close_race() {
	ROCEMU_DEVICES="rocemu0=$(addr 1)"
	export ROCEMU_DEVICES
	start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} capture 30 "$ROCEMU" run -- \
		"$CM_CLOSE_RACE" "$(addr 9)" || fail "cm_close_race failed"
	expect_checks_passed
}

for_each_backend cm_close_race
