#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified rping (100 pings, data validated) and ucmatose (4 connections)
# over the RDMA CM on ConnectX-3 devices: between two of them and between a
# ConnectX-3 and a ConnectX-5, both ways.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_rdmacm.sh"
require_programs rping ucmatose
use_test_net 322

cx3_rdmacm() {
	ROCEMU_DEVICES="mlx4_0=$(addr 1)@cx3,mlx4_1=$(addr 2)@cx3,mlx5_0=$(addr 3)"
	export ROCEMU_DEVICES
	start_daemon
	rping_pair "$(addr 1)" "$(addr 2)"
	rping_pair "$(addr 1)" "$(addr 3)"
	rping_pair "$(addr 3)" "$(addr 2)"
	ucmatose_pair "$(addr 1)" "$(addr 2)"
	ucmatose_pair "$(addr 1)" "$(addr 3)"
	ucmatose_pair "$(addr 3)" "$(addr 1)"
}

for_each_backend cx3_rdmacm
