#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# XRC QPs across two processes (tests/e2e/srq_xrc_dc/xrc_qp.c): two targets, one made
# by each process in one domain opened through a file, take their receives
# from the one XRC SRQ of the first; a target lives until its last
# reference goes; an SRQ of another domain is refused. The captures decode
# in tshark as InfiniBand, the initiators' as XRC requests and the
# targets' as XRC acknowledges, with no malformed frame.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
XRC_QP=$top_builddir/tests/e2e/srq_xrc_dc/xrc_qp
require_built "$XRC_QP"
use_test_net 190

# XRC opcodes are 0xa0-0xb7 (160-183): requests with XRCETH, acknowledges without.
XRC_OPCODE='^eth:.*:infiniband[[:space:]]+(16[0-9]|17[0-9]|18[0-3])$'

xrc_qp() {
	local pcap_dir=$WORK_DIR/pcap-$BACKEND

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info ROCEMU_PCAP=$pcap_dir start_daemon
	# Our own program: leaks count here (rocemu run turns them off for distribution programs).
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$XRC_QP" rocemu0 rocemu1 ||
		fail "xrc_qp failed"
	expect "^ok: 4 messages through TGT1, 4 through TGT2$" "both targets received through the one SRQ"
	expect "^ok: other process: TGT1 still there after its creator's destroy$" \
		"a target outlives its creator's destroy"
	expect "^ok: ibv_open_qp of TGT1 after its last reference -> " "a target goes with its last reference"
	expect "^ok: SRQ of another domain" "an SRQ of another domain is a NAK invalid request"
	expect_none "^FAIL" "no check failed, in either process"
	expect_checks_passed
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	if ! command -v tshark >/dev/null; then
		echo "skip the capture check: tshark is not installed"
		return 0
	fi
	expect_decoded "$pcap_dir/rocemu0.pcap" "$XRC_OPCODE" "XRC"
	expect_decoded "$pcap_dir/rocemu1.pcap" "$XRC_OPCODE" "XRC"
}

for_each_backend xrc_qp
