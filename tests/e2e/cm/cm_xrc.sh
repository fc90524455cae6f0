#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# RDMA CM ids of XRC QPs (RDMA_PS_IB with IBV_QPT_XRC_SEND and
# IBV_QPT_XRC_RECV, passed through as the kernel's ucma passes them):
# unmodified rdma_xserver and rdma_xclient with -c x, and with their
# default (-c r, RC), each side ending 0. The capture holds what the
# kernel's ib_cm puts on the wire for XRC (tests/e2e/cm/cm_xrc_check.c):
# the REQ's transport XRC without what an initiator has not, the REP
# naming the target in Local EECN with its SRQ bit, the SRQ number of
# rdma_xserver's private data in the XRCETH of rdma_xclient's SEND, whose
# PSN is the REP's Starting PSN and whose 16 bytes arrive and are
# acknowledged; every REP's Starting PSN is where the client's sends start
# (tests/e2e/harness/cm_psn_check.c), every frame decodes as InfiniBand.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
CM_XRC_CHECK=$top_builddir/tests/e2e/cm/cm_xrc_check
CM_PSN_CHECK=$top_builddir/tests/e2e/harness/cm_psn_check
require_built "$CM_XRC_CHECK" "$CM_PSN_CHECK"
require_programs rdma_xserver rdma_xclient
use_test_net 126

PAIR_READY=wait_cm_listening
PAIR_LOSSY=

# xpair [OPTION...]: rdma_xserver and rdma_xclient with OPTION, both end 0.
xpair() {
	local what="rdma_xserver / rdma_xclient${*:+ $*}"

	next_port
	run_pair "$what" 30 rdma_xserver -p "$PAIR_PORT" "$@" \
		--client rdma_xclient -s "$(addr 1)" -p "$PAIR_PORT" "$@"
	grep -q "^rdma_xserver: end 0" "$SERVER_OUT" && grep -q "^rdma_xclient: end 0" "$CLIENT_OUT" ||
		fail "$what: not both sides end with status 0"
	ok "$what: both sides end with status 0"
}

cm_xrc() {
	local pcap=$WORK_DIR/pcap-$BACKEND

	# One device: the client reaches the server's address from the server's device anyway
	# (the kernel's loopback rule).
	ROCEMU_DEVICES="rocemu0=$(addr 1)"
	export ROCEMU_DEVICES
	ROCEMU_PCAP=$pcap ROCEMU_PCAP_SNAPLEN=0 start_daemon
	xpair -c x
	xpair
	xpair -c x
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	capture 30 "$CM_XRC_CHECK" "$pcap/rocemu0.pcap" || fail "cm_xrc_check: the XRC connection"
	expect_checks_passed "the XRC connection on the wire"
	capture 30 "$CM_PSN_CHECK" "$pcap/rocemu0.pcap" 0 3 ||
		fail "cm_psn_check: a Starting PSN is not where the first request starts"
	ok "$(tail -1 "$OUT")"
	check_captures "$pcap"
	cm_ladder "$pcap/rocemu0.pcap" ConnectRequest ConnectReply ReadyToUse DisconnectRequest \
		DisconnectReply
}

for_each_backend cm_xrc
