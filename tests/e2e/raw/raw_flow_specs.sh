#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Flow steering (tests/e2e/raw/raw_flow_specs.c): every spec type and
# attribute type steers what it matches to its QP (tagged where it says)
# and nothing else; priorities and DROP; malformed rules refused with
# mlx5's errno. rocemu0 sends to two QPs of rocemu1.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RAW_FLOW_SPECS=$top_builddir/tests/e2e/raw/raw_flow_specs
require_built "$RAW_FLOW_SPECS"
use_test_net 282

raw_flow_specs() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	run_checks_between "$RAW_FLOW_SPECS" rocemu0 rocemu1
	local spec
	for spec in "ETH dst_mac and ether_type" "IPV4 src and dst" "IPV4_EXT proto and tos" \
		"IPV6 dst and next header" "TCP dst_port" "UDP dst_port" "VXLAN_TUNNEL VNI 42" \
		"ACTION_TAG" "ACTION_DROP: UDP 4000 dropped, 4001 to q2" \
		"ALL_DEFAULT: a frame no rule takes goes to it" "MC_DEFAULT: multicast in, unicast not"; do
		expect "^ok: $spec: arrives, this frame and no other before it" "$spec steers"
	done
	expect "^ok: ACTION_TAG: flow tag 0x12345 " "ACTION_TAG's tag in the completion"
	expect "^ok: SNIFFER: sees the sent frame" "SNIFFER sees what the port sends"
	expect "^ok: a spec of unknown type 0x77: refused with Invalid argument" "an unknown spec refused"
}

for_each_backend raw_flow_specs
