#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified UCX on ConnectX-3 devices: `ucx_info -d` lists rc_verbs and
# ud_verbs there and no mlx5 transport (mlx5dv_is_supported is false on a
# ConnectX-3), and ucx_perftest runs over rc_verbs and ud_verbs between two
# ConnectX-3 devices and between a ConnectX-3 and a ConnectX-5.
# UCX before 1.18 (Debian 12 has 1.13) takes the address family of a UD
# receive over RoCE from wc.sl, the packet type a ConnectX-4 or later writes
# there; libmlx4 reports the VLAN priority in it, so with its destination GID
# check on, ud_verbs drops every UDP/IPv4 datagram on a ConnectX-3 (UCX's
# pull request 10209 mends this for providers that do so): the check is off.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_ucx.sh"
export UCX_UD_VERBS_ETH_DGID_CHECK=n
use_test_net 323

# ucx_pair MODEL0 MODEL1: the daemon's two devices, UCX's view of them and traffic between them.
ucx_pair() {
	local tls

	ucx_daemon_start "$1" "$2"
	ucx_resources
	expect '^resource rc_verbs rocemu0:1$' "$1: ucx_info -d lists rc_verbs on rocemu0:1"
	expect '^resource ud_verbs rocemu0:1$' "$1: ucx_info -d lists ud_verbs on rocemu0:1"
	expect_none '^resource [a-z]+_mlx5 rocemu0:1$' "$1: no mlx5 transport on rocemu0:1"
	for tls in rc_verbs,ud_verbs:aux ud_verbs; do
		ucp_perftest "$tls" "${tls%%,*}" tag_lat 8 200
		ucp_perftest "$tls" "" tag_bw 65536 100
	done
	ucp_perftest rc_verbs,ud_verbs:aux "" ucp_put_bw 65536 100
	uct_perftest rc_verbs put_bw zcopy 65536 200
	stop_daemon "$ROCEMU_RUNTIME_DIR"
}

cx3_ucx() {
	ucx_pair cx3 cx3
	ucx_pair cx3 cx5
}

for_each_backend cx3_ucx
