#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# mlx5 DC of the project's own (tests/e2e/srq_xrc_dc/dc.c): many DCIs to one DCT, one
# DCI to many DCTs (SEND, WRITE, READ, fetch-and-add), a wrong access key
# refused and counted (rocemu stats), DCI stream error isolation and
# mlx5dv_dci_stream_id_reset, the DCI in ERR once log_num_errored's
# streams are in error, a DC WQE written into the ring by hand;
# between two devices, on one, and under injected loss and reordering.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
DC=$top_builddir/tests/e2e/srq_xrc_dc/dc
require_built "$DC"
use_test_net 112

FAULTS="drop=0.05,dup=0.02,reorder=0.02,seed=7"

# counter DEV NAME: one counter of rocemu stats.
counter() {
	capture 10 "$ROCEMU" stats || fail "rocemu stats"
	awk -v dev="$1" -v name="$2" '$1 == dev && $2 == name { print $3 }' "$OUT"
}

dc() {
	local before after

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	before=$(counter rocemu1 rx_dc_key_violations)
	capture 120 "$ROCEMU" run -- "$DC" rocemu0 rocemu1 || fail "dc rocemu0 rocemu1 failed"
	expect "^ok: SEND with a wrong DC key: wr_id 0x4b transport retry counter exceeded" \
		"a wrong DC access key: the DCI's retries run out"
	expect "^ok: the DCI after its stream.s error" "stream error isolation"
	expect "^ok: the DCI once 2 streams .* are in error: .* in ERR" "the DCI fails at log_num_errored's streams in error"
	expect_checks_passed "rocemu0 -> rocemu1"
	after=$(counter rocemu1 rx_dc_key_violations)
	[ "${after:-0}" -gt "${before:-0}" ] || fail "rx_dc_key_violations of rocemu1: $before, then $after"
	ok "rocemu1 counted the wrong keys: rx_dc_key_violations $before -> $after"
	capture 120 "$ROCEMU" run -- "$DC" rocemu0 rocemu0 || fail "dc rocemu0 rocemu0 failed"
	expect_checks_passed "on one device"
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	# RC-grade reliability per DCI-DCT pair: the same under loss, duplication, reordering.
	ROCEMU_FAULTS=$FAULTS start_daemon
	capture 120 "$ROCEMU" run -- "$DC" rocemu0 rocemu1 || fail "dc under $FAULTS failed"
	expect_checks_passed "under $FAULTS"
	after=$(counter rocemu0 retransmitted_packets)
	[ "${after:-0}" -gt 0 ] || fail "the DCIs resent nothing under $FAULTS"
	ok "under $FAULTS the DCIs resent $after packets"
}

for_each_backend dc
