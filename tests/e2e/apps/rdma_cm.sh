#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified rdmacm-utils over rocemu's RDMA CM: rping (100 pings, data
# displayed and validated) and ucmatose (4 connections), between two
# devices and on one; udaddy (UD ids, SIDR); rsockets (rstream and
# riostream, data verified); the captures show the CM handshake (REQ, REP,
# RTU, DREQ, DREP, SIDR REQ and REP) as InfiniBand CM on QP1, none malformed,
# and each connection's first requests carry the Starting PSNs of its REQ
# and REP as the kernel's ib_cm means them (tests/e2e/harness/cm_psn_check.c).
# perftest's -R is left out: its client makes a second connection that can
# reach the server before the server listens for it (REJECTED 8 under load,
# as it would be on the kernel's CM).
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_rdmacm.sh"
CM_PSN_CHECK=$top_builddir/tests/e2e/harness/cm_psn_check
require_built "$CM_PSN_CHECK"
require_programs rping ucmatose udaddy rstream riostream
use_test_net 240

# udaddy_pair: UD ids (SIDR REQ/REP), 2 connections of 10 messages; udaddy's port is fixed.
udaddy_pair() {
	local what="udaddy -c 2 -C 10, $(addr 2) -> $(addr 1)"

	PAIR_PORT=7174
	run_pair "$what" 30 udaddy -b "$(addr 1)" -c 2 -C 10 \
		--client udaddy -s "$(addr 1)" -b "$(addr 2)" -c 2 -C 10
	grep -q "^return status 0" "$SERVER_OUT" && grep -q "^return status 0" "$CLIENT_OUT" ||
		fail "$what: not both sides report status 0"
	ok "$what: data transfers complete on both sides"
}

# rsocket_pair TOOL [OPTION...]: rstream or riostream over rsockets, data verified (-T v).
rsocket_pair() {
	local tool=$1 what

	shift
	what="$tool -T v $* -S 4096 -C 100, $(addr 2) -> $(addr 1)"
	next_port
	run_pair "$what" 30 "$tool" -b "$(addr 1)" -p "$PAIR_PORT" -S 4096 -C 100 -T v "$@" \
		--client "$tool" -s "$(addr 1)" -b "$(addr 2)" -p "$PAIR_PORT" -S 4096 -C 100 -T v "$@"
	expect_client "^custom +4k +100 +1 +800k " "$what: 100 transfers of 4 KiB both ways"
}

rdma_cm() {
	local pcap=$WORK_DIR/pcap-$BACKEND dev

	mkdir -p "$pcap"
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_PCAP=$pcap start_daemon
	rping_pair "$(addr 1)" "$(addr 2)"
	rping_pair "$(addr 1)" "$(addr 1)"
	ucmatose_pair "$(addr 1)" "$(addr 2)"
	udaddy_pair
	rsocket_pair rstream
	rsocket_pair riostream
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	check_captures "$pcap"
	# Both sides send on each connection: rping's two, ucmatose's 4 and rsockets'.
	for dev in rocemu0 rocemu1; do
		capture 30 "$CM_PSN_CHECK" "$pcap/$dev.pcap" 6 6 ||
			fail "cm_psn_check $dev.pcap: a Starting PSN is not where the first request starts"
		ok "$(tail -1 "$OUT")"
	done
	cm_ladder "$pcap/rocemu1.pcap" ConnectRequest ConnectReply ReadyToUse DisconnectRequest \
		DisconnectReply ServiceIDResReq ServiceIDResReqResp
}

for_each_backend rdma_cm
