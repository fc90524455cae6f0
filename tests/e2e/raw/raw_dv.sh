#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A direct-verbs raw packet program (tests/e2e/raw/raw_dv.c): its own mlx5
# send WQEs with the Ethernet segment, receive WQEs, doorbells and CQE
# parsing on mlx5dv_init_obj alone, frames both ways with a verbs raw QP,
# every ring wrapping.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RAW_DV=$top_builddir/tests/e2e/raw/raw_dv
require_built "$RAW_DV"
use_test_net 284

raw_dv() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	run_checks_between "$RAW_DV" rocemu0 rocemu1
	expect "^ok: 300 of 300 frames sent by mlx5 WQEs arrived" "every frame of the program's WQEs arrived"
	expect "^ok: 300 of 300 CQEs say IPv4, UDP, L3 and L4 checksums OK" "the CQEs' L3/L4 fields"
}

for_each_backend raw_dv
