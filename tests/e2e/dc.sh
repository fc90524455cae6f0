#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# mlx5 DC of the project's own (tests/e2e/dc.c): many DCIs to one DCT, one
# DCI to many DCTs (SEND, WRITE, READ, fetch-and-add), a wrong access key
# refused and counted (rocemu stats), DCI stream error isolation and
# mlx5dv_dci_stream_id_reset, a DC WQE written into the ring by hand.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DC=$top_builddir/tests/e2e/dc
require_built "$DC"
use_test_net 112

# key_violations DEV: the device's rx_dc_key_violations counter.
key_violations() {
	capture 10 "$ROCEMU" stats || fail "rocemu stats"
	awk -v dev="$1" '$1 == dev && $2 == "rx_dc_key_violations" { print $3 }' "$OUT"
}

dc() {
	local before after

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	before=$(key_violations rocemu1)
	capture 120 "$ROCEMU" run -- "$DC" rocemu0 rocemu1 || fail "dc rocemu0 rocemu1 failed"
	expect "^ok: SEND with a wrong DC key: wr_id 0x4b transport retry counter exceeded" \
		"a wrong DC access key: the DCI's retries run out"
	expect "^ok: the DCI is still in RTS after its stream's error" "stream error isolation"
	expect "^0 failed$" "rocemu0 -> rocemu1: every check passed ($(grep -c '^ok: ' "$OUT") checks)"
	after=$(key_violations rocemu1)
	[ "${after:-0}" -gt "${before:-0}" ] || fail "rx_dc_key_violations of rocemu1: $before, then $after"
	ok "rocemu1 counted the wrong keys: rx_dc_key_violations $before -> $after"
	capture 120 "$ROCEMU" run -- "$DC" rocemu0 rocemu0 || fail "dc rocemu0 rocemu0 failed"
	expect "^0 failed$" "on one device: every check passed ($(grep -c '^ok: ' "$OUT") checks)"
}

for_each_backend dc
