#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified UCX (Debian's ucx-utils) over rocemu: `ucx_info -d` lists
# rc_verbs and ud_verbs on rocemu0:1 (it checks /dev/infiniband/uverbsN and
# sysfs, which the shim answers for emulated devices); ucx_perftest between
# two processes, server on rocemu0 and client on rocemu1: tag_lat, tag_bw
# and ucp_put_bw over rc_verbs (UD only to wire it up, as UCX always needs:
# UCX_TLS=rc_verbs,ud_verbs:aux) and over ud_verbs, and UCT's put_bw over
# rc_verbs (UD has no RDMA at the UCT level).
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_ucx.sh"
use_test_net 180

ucx_info_lists() {
	ucx_resources
	expect '^resource rc_verbs rocemu0:1$' "ucx_info -d lists rc_verbs on rocemu0:1"
	expect '^resource ud_verbs rocemu0:1$' "ucx_info -d lists ud_verbs on rocemu0:1"
	expect '^resource rc_verbs rocemu1:1$' "ucx_info -d lists rc_verbs on rocemu1:1"
}

ucx() {
	local tls

	ucx_daemon_start
	ucx_info_lists
	for tls in rc_verbs,ud_verbs:aux ud_verbs; do
		ucp_perftest "$tls" "${tls%%,*}" tag_lat 8 200
		ucp_perftest "$tls" "" tag_bw 65536 100
		ucp_perftest "$tls" "" ucp_put_bw 65536 100
	done
	uct_perftest rc_verbs put_bw zcopy 65536 200
}

for_each_backend ucx
