#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# One thread posting and one polling a QP (tests/e2e/rc/wrid_race.c): a
# million completions, each with the wr_id of its own work request.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
WRID_RACE=$top_builddir/tests/e2e/rc/wrid_race
require_built "$WRID_RACE"
use_test_net 51

COUNT=1000000

wrid_race() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 600 "$ROCEMU" run -- "$WRID_RACE" rocemu0 rocemu1 "$COUNT" ||
		fail "wrid_race failed"
	expect "^0 failed$" "$COUNT completions, every wr_id right ($(grep -E '^[0-9]+ completions in' "$OUT"))"
}

for_each_backend wrid_race
