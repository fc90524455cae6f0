#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# mlx5dv_modify_qp_udp_sport and mlx5dv_reserved_qpn_alloc/dealloc
# (tests/e2e/dv/mlx5dv_qpn.c); the capture shows QP a's SENDs leave from its
# flow's port in 0xC000-0xFFFF until the change and from the new port after.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
MLX5DV_QPN=$top_builddir/tests/e2e/dv/mlx5dv_qpn
require_built "$MLX5DV_QPN"
use_test_net 102
# Within this test's port range (31500-31999), so no other test binds it.
NEW_SPORT=31700

# expect_sport_change FILE: the SEND Only frames (opcode 4) from device a's
# address leave from one port in 0xC000-0xFFFF, then, all later, from NEW_SPORT.
expect_sport_change() {
	local file=$1 name ports before after

	name=$(basename "$file")
	capture 30 tshark -r "$file" -Y "ip.src == $(addr 1) && infiniband.bth.opcode == 4" \
		-T fields -e udp.srcport || fail "tshark cannot read $file"
	ports=$(grep -E '^[0-9]+$' "$OUT" | uniq | tr '\n' ' ')
	echo "SEND source ports in order (repeats folded): $ports"
	before=$(grep -E '^[0-9]+$' "$OUT" | grep -vc "^$NEW_SPORT\$")
	after=$(grep -c "^$NEW_SPORT\$" "$OUT")
	# shellcheck disable=SC2086
	set -- $ports
	[ $# -eq 2 ] && [ "$1" -ge 49152 ] && [ "$2" -eq "$NEW_SPORT" ] ||
		fail "$name: SEND source ports $ports, not one flow port then $NEW_SPORT"
	[ "$before" -ge 5 ] && [ "$after" -ge 5 ] ||
		fail "$name: $before SENDs before the change, $after after (5 each sent)"
	ok "$name: $before SENDs from port $1, then $after from $NEW_SPORT"
}

mlx5dv_qpn() {
	local pcap_dir=$WORK_DIR/pcap-$BACKEND

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_PCAP=$pcap_dir start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$MLX5DV_QPN" rocemu0 rocemu1 "$NEW_SPORT" ||
		fail "mlx5dv_qpn failed"
	expect_checks_passed
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	if command -v tshark >/dev/null; then
		expect_sport_change "$pcap_dir/rocemu0.pcap"
	else
		echo "skip the capture check: tshark is not installed"
	fi
}

for_each_backend mlx5dv_qpn
