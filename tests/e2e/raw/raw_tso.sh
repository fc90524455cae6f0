#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# TSO (tests/e2e/raw/raw_tso.c): a 64 KiB IBV_WR_TSO send arrives at the
# other device's raw QP as the segments the test's model of TSO makes,
# byte for byte; headers past max_tso_header are refused. rocemu0 to
# rocemu1, then back.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RAW_TSO=$top_builddir/tests/e2e/raw/raw_tso
require_built "$RAW_TSO"
use_test_net 283

raw_tso() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	run_checks_between "$RAW_TSO" rocemu0 rocemu1
	expect "^ok: TSO, mss 1448, flags 0x18: 46 of 46 segments are the model's" "46 segments of mss 1448"
	expect "^ok: TSO, mss 1000, flags 0x99: 66 of 66 segments are the model's" "66 segments of mss 1000"
	run_checks_between "$RAW_TSO" rocemu1 rocemu0
}

for_each_backend raw_tso
