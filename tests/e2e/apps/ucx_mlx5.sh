#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified UCX's mlx5 transports over rocemu: UCX opens rocemu0 as a
# ConnectX-5 (the PCI ids above its sysfs path) without DevX, lists rc_mlx5,
# ud_mlx5 and dc_mlx5, and then writes its own WQEs, rings doorbell records and
# BlueFlame, posts receives through the SRQ's doorbell record and parses
# CQEs itself. ucx_perftest between two processes, server on rocemu0 and
# client on rocemu1: tag_lat, tag_bw, UCT's put_bw and am_bw over rc_mlx5
# (UD to wire it up, as UCX needs: UCX_TLS=rc_mlx5,ud_mlx5:aux); tag_lat,
# tag_bw, ucp_put_bw (UD has no RDMA at the UCT level) and UCT's am_bw over
# ud_mlx5; tag_lat and tag_bw (UD beside it for UCP's wire-up), UCT's
# put_bw and am_bw over dc_mlx5, whose DCIs reach the peer's DCT. UCX says at info level which transport carries the endpoint's
# operations, and rocemu0's counters show the bytes went through it.
# The latency mode (ROCEMU_BUSY_POLL=1) serves the direct-verbs transports
# too: tag_lat and tag_bw over rc_mlx5 and dc_mlx5 under such a daemon.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_ucx.sh"
use_test_net 91

ucx_info_lists_mlx5() {
	local dev tl

	ucx_resources
	for dev in rocemu0 rocemu1; do
		for tl in rc_mlx5 ud_mlx5 dc_mlx5; do
			expect "^resource $tl $dev:1$" "ucx_info -d lists $tl on $dev:1"
		done
	done
}

ucx_mlx5() {
	local tls

	ucx_daemon_start
	ucx_info_lists_mlx5
	for tls in rc_mlx5,ud_mlx5:aux ud_mlx5 dc_mlx5,ud_mlx5:aux; do
		ucp_perftest "$tls" "${tls%%,*}" tag_lat 8 500
		ucp_perftest "$tls" "${tls%%,*}" tag_bw 65536 100
	done
	uct_perftest rc_mlx5 put_bw zcopy 65536 200
	uct_perftest rc_mlx5 am_bw zcopy 8192 500
	ucp_perftest ud_mlx5 ud_mlx5 ucp_put_bw 65536 100
	uct_perftest ud_mlx5 am_bw bcopy 2048 500
	uct_perftest dc_mlx5 put_bw zcopy 65536 200
	uct_perftest dc_mlx5 am_bw zcopy 8192 500
	end_daemon

	ROCEMU_BUSY_POLL=1 ucx_daemon_start
	capture 10 "$ROCEMU" status || fail "rocemu status: $(cat "$OUT")"
	expect "^rocemud pid [0-9]+ backend $ROCEMU_NET delivery local poll busy " "the daemon is in the latency mode"
	for tls in rc_mlx5,ud_mlx5:aux dc_mlx5,ud_mlx5:aux; do
		ucp_perftest "$tls" "${tls%%,*}" tag_lat 8 500
		ucp_perftest "$tls" "${tls%%,*}" tag_bw 65536 100
	done
}

for_each_backend ucx_mlx5
