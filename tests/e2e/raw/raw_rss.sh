#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# RSS (tests/e2e/raw/raw_rss.c): 10000 IPv4/UDP flows from rocemu0 to an
# RSS QP of rocemu1 over 8 WQs each land in the WQ a reference Toeplitz
# with the test's key picks.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RAW_RSS=$top_builddir/tests/e2e/raw/raw_rss
require_built "$RAW_RSS"
use_test_net 286

raw_rss() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	run_checks_between "$RAW_RSS" rocemu0 rocemu1
	expect "^ok: 10000 of 10000 flows landed in the WQ the reference Toeplitz picks" "every flow where Toeplitz says"
}

for_each_backend raw_rss
