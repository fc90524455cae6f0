#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified Open MPI (Debian's openmpi-bin) over UCX over rocemu: two ranks
# of tests/e2e/apps/mpi_pingpong exchange and check messages of 1 B to 4 MiB with
# pml ucx over UCX_TLS=rc_verbs (UD only to wire it up, as UCX always needs),
# over ud_verbs, over rc_mlx5 (UCX's direct-verbs RC, ud_mlx5 to wire it
# up), over ud_mlx5 and over dc_mlx5 alone (DCIs reach the peer's DCT by
# its address: no wiring up); the only BTL is self, so no TCP or shared memory, and a
# job where ob1 won cannot run. pml ucx chosen two ways:
# - `--mca pml ucx`, as Debian users say (its openmpi-mca-params.conf has
#   pml = ^ucx);
# - `--mca pml ''`, Open MPI's own default, which takes UCX over ob1 only
#   when a device's driver (/sys/class/infiniband/DEV/device/driver) matches
#   opal_common_ucx_devices, mlx* unless told otherwise: rocemu's devices
#   read as mlx5_core, whatever ROCEMU_DEVICES names them (rocemu0, mlx5_0),
#   and `--mca opal_common_ucx_devices any` works as well;
# - on a device playing a ConnectX-3 (@cx3), which reads as mlx4_core, by
#   Open MPI's default too, over rc_verbs and ud_verbs.
# UCX says at info level which transport and device carry the tags, and the
# device's counters show the bytes went through it.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
MPI_PINGPONG=$top_builddir/tests/e2e/apps/mpi_pingpong
command -v mpirun >/dev/null || skip "mpirun not installed (Debian package openmpi-bin)"
[ -x "$MPI_PINGPONG" ] ||
	skip "mpi_pingpong not built: configure found no Open MPI mpicc (Debian package libopenmpi-dev)"
use_test_net 200

# Open MPI's and UCX's own allocations at exit are not the shim's to answer for.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
# Every message size each way: 1 + 2 + ... + 4 MiB.
PAYLOAD_EACH_WAY=$(((8 << 20) - 1))
MPIRUN=(mpirun -np 2 --oversubscribe --allow-run-as-root --timeout 45 --mca btl self
	--mca pml_base_verbose 10)
RC_TLS=rc_verbs,ud_verbs:aux,self
UD_TLS=ud_verbs,self
RC_MLX5_TLS=rc_mlx5,ud_mlx5:aux,self
UD_MLX5_TLS=ud_mlx5,self
DC_MLX5_TLS=dc_mlx5,self

# mpi_run DEV TLS MPIRUN-OPTION...: mpi_pingpong as two ranks with
# UCX_TLS=TLS on DEV:1; pml ucx must be chosen and carry tags over the
# first transport of TLS on DEV.
mpi_run() {
	local dev=$1 tls=$2 before after lane what

	shift 2
	what="mpirun $(printf '%q ' "$@")over UCX_TLS=$tls on $dev"
	lane=${tls%%,*}
	before=$(rcv_bytes "$dev")
	capture 60 "$ROCEMU" run -- "${MPIRUN[@]}" "$@" -x UCX_TLS="$tls" -x UCX_NET_DEVICES="$dev:1" \
		-x UCX_LOG_LEVEL=info "$MPI_PINGPONG" || fail "$what failed"
	after=$(rcv_bytes "$dev")
	[ "$(grep -c '\] select: component ucx selected$' "$OUT")" -eq 2 ] ||
		fail "$what: Open MPI does not say that both ranks chose pml ucx"
	ok "$what: both ranks chose pml ucx"
	expect "^rank 0: 23 sizes from 1 B to 4194304 B checked both ways$" "$what: rank 0 checked every size"
	expect "^rank 1: 23 sizes from 1 B to 4194304 B checked both ways$" "$what: rank 1 checked every size"
	[ "$(grep -Ec "ep_cfg\[[0-9]+\]: tag\($lane/$dev:1\)$" "$OUT")" -ge 2 ] ||
		fail "$what: UCX does not say that each rank sends its tags to the other over $lane/$dev:1"
	ok "$what: each rank's tags to the other go over $lane/$dev:1 alone"
	expect_none "UCX +ERROR" "$what: no UCX error"
	[ "$((after - before))" -ge "$((2 * PAYLOAD_EACH_WAY))" ] ||
		fail "$what: $dev received $((after - before)) bytes, less than the $((2 * PAYLOAD_EACH_WAY)) sent"
	ok "$what: $dev received $((after - before)) bytes for $((2 * PAYLOAD_EACH_WAY)) of messages"
}

mpi() {
	ROCEMU_DEVICES="rocemu0=$(addr 1)"
	export ROCEMU_DEVICES
	start_daemon
	mpi_run rocemu0 "$RC_TLS" --mca pml ucx
	mpi_run rocemu0 "$UD_TLS" --mca pml ucx
	mpi_run rocemu0 "$UD_TLS" --mca pml ""
	mpi_run rocemu0 "$RC_TLS" --mca pml "" --mca opal_common_ucx_devices any
	mpi_run rocemu0 "$RC_MLX5_TLS" --mca pml ucx
	mpi_run rocemu0 "$UD_MLX5_TLS" --mca pml ucx
	mpi_run rocemu0 "$DC_MLX5_TLS" --mca pml ucx
	end_daemon

	ROCEMU_DEVICES="mlx5_0=$(addr 1)"
	start_daemon
	mpi_run mlx5_0 "$RC_TLS" --mca pml ""
	mpi_run mlx5_0 "$UD_TLS" --mca pml ""
	end_daemon

	# A ConnectX-3 (mlx4 rings, mlx4_core): pml ucx by Open MPI's own default, verbs
	# transports; UD's destination GID check off, as tests/e2e/cx3/cx3_ucx.sh says why.
	ROCEMU_DEVICES="mlx4_0=$(addr 1)@cx3"
	start_daemon
	mpi_run mlx4_0 "$RC_TLS" --mca pml "" -x UCX_UD_VERBS_ETH_DGID_CHECK=n
	mpi_run mlx4_0 "$UD_TLS" --mca pml "" -x UCX_UD_VERBS_ETH_DGID_CHECK=n
}

for_each_backend mpi
