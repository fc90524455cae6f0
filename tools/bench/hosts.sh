# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# The two-host measurements of tools/bench/run, sourced after lib.sh: two
# network namespaces joined by a veth pair of jumbo frames (MTU 9000, as
# RoCE fabrics are set up: the devices' active MTU is 4096), a daemon in
# each, every program in the namespace of its host and an IPC namespace of
# its own (UCX takes two processes of one boot id and one IPC namespace for
# one host). UCX and Open MPI choose their own transport over rocemu; the
# same programs over TCP between the same hosts are what they are held
# against. Needs root (ip netns); without it every key says why.
# shellcheck shell=bash disable=SC2154

HOSTS_NET=198.18.95
HOSTS_LIMIT=1800 # the daemons' whole life
HOSTS_NS=("rocemu-bench-$$-a" "rocemu-bench-$$-b")
HOSTS_ADDR=("$HOSTS_NET.1" "$HOSTS_NET.2")
HOSTS_DIR=("$work/host-a" "$work/host-b")

# hosts_up [ENV...]: the namespaces HOSTS_NS[0..1] with addresses
# HOSTS_ADDR[0..1], and daemons (ENV set for them) of runtime dirs
# HOSTS_DIR[0..1]; fails saying why.
hosts_up() {
	local i
	ip netns add "${HOSTS_NS[0]}" 2>/dev/null || { echo "cannot create a network namespace here (needs root)"; return 1; }
	ip netns add "${HOSTS_NS[1]}" &&
		ip link add veth0 netns "${HOSTS_NS[0]}" mtu 9000 type veth peer name veth0 \
			netns "${HOSTS_NS[1]}" mtu 9000 || { echo "cannot create the veth pair"; return 1; }
	for i in 0 1; do
		ip -n "${HOSTS_NS[i]}" addr add "${HOSTS_ADDR[i]}/24" dev veth0 &&
			ip -n "${HOSTS_NS[i]}" link set veth0 up && ip -n "${HOSTS_NS[i]}" link set lo up &&
			mkdir -m 0700 "${HOSTS_DIR[i]}" || { echo "cannot set up host $i"; return 1; }
		ip netns exec "${HOSTS_NS[i]}" env "$@" ROCEMU_RUNTIME_DIR="${HOSTS_DIR[i]}" \
			ROCEMU_DEVICES="rocemu0=${HOSTS_ADDR[i]}" \
			timeout -k 5 "$HOSTS_LIMIT" "$build/tools/rocemud" >"${HOSTS_DIR[i]}.log" 2>&1 &
	done
	for i in 0 1; do
		hosts_answers "$i" || { echo "rocemud of host $i: $(failure 1 "${HOSTS_DIR[i]}.log")"; return 1; }
	done
}

# hosts_answers I: host I's daemon answers within 10 s.
hosts_answers() {
	local tries=100
	while ((tries-- > 0)); do
		ROCEMU_RUNTIME_DIR=${HOSTS_DIR[$1]} timeout 5 "$build/tools/rocemu" status >/dev/null 2>&1 &&
			return 0
		sleep 0.1
	done
	return 1
}

hosts_down() {
	local i
	for i in 0 1; do
		ROCEMU_RUNTIME_DIR=${HOSTS_DIR[i]} timeout 10 "$build/tools/rocemu" stop >/dev/null 2>&1
		ip netns del "${HOSTS_NS[i]}" 2>/dev/null
		rm -rf "${HOSTS_DIR[i]}"
	done
}

# in_host I SHIM CMD...: CMD becomes CMD run on host I, under the shim if SHIM is 1.
in_host() {
	local i=$1 shim=$2
	shift 2
	CMD=(ip netns exec "${HOSTS_NS[i]}" unshare --ipc env ROCEMU_RUNTIME_DIR="${HOSTS_DIR[i]}")
	((shim)) && CMD+=("$build/tools/rocemu" run --)
	CMD+=("$@")
}

# hosts_ucx_sides SIDE PORT TLS ARGS...: ucx_perftest, server on host 0,
# client on host 1; TLS "default" sets nothing and runs under the shim.
hosts_ucx_sides() {
	local side=$1 port=$2 tls=$3 i env=()
	shift 3
	i=$([ "$side" = server ] && echo 0 || echo 1)
	[ "$tls" = default ] || env=(UCX_TLS="$tls")
	in_host "$i" "$([ "$tls" = tcp ] && echo 0 || echo 1)" env "${env[@]}" ucx_perftest
	[ "$side" = server ] || CMD+=("${HOSTS_ADDR[0]}")
	CMD+=(-p "$port" "$@")
}

# hosts_ucx_runs NAME TLS [SUFFIX]: tag_lat 8 B and tag_bw 64 KiB between
# the hosts, under hosts_NAME_lat8SUFFIX (its mean under
# hosts_NAME_lat8SUFFIX_mean) and hosts_NAME_bwSUFFIX.
hosts_ucx_runs() {
	local name=$1 tls=$2 sfx=${3:-}
	ucx_installed "hosts_${name}_lat8$sfx" "hosts_${name}_bw$sfx" || return
	LISTEN_NETNS=${HOSTS_NS[0]} perftest_runs "hosts_${name}_lat8$sfx" parse_ucx_lat_mean hosts_ucx_sides \
		"$tls" -t tag_lat -s 8 -n 10000
	LISTEN_NETNS=${HOSTS_NS[0]} perftest_runs "hosts_${name}_bw$sfx" parse_ucx_bw hosts_ucx_sides \
		"$tls" -t tag_bw -s 65536 -n 5000
}

# hosts_mpi_runs NAME SHIM MPIRUN-OPTION...: tools/bench/mpi_lat_bw as one
# rank on each host (under the shim if SHIM is 1), mpirun on host 0 reaching
# host 1 as through ssh, by an rsh agent; hosts_mpi_NAME_lat (us) and
# hosts_mpi_NAME_bw (Gb/s).
hosts_mpi_runs() {
	local name=$1 shim=$2 prog=$build/tools/bench/mpi_lat_bw agent=$work/rsh-agent-$1 i log rc
	local keys=("hosts_mpi_${name}_lat" "hosts_mpi_${name}_bw")
	shift 2
	command -v mpirun >/dev/null || { fails "mpirun not installed (Debian package openmpi-bin)" "${keys[@]}"; return; }
	[ -x "$prog" ] || { fails "$prog is not built (configure found no Open MPI mpicc)" "${keys[@]}"; return; }
	# The agent's first argument is the host, the others one shell command for it.
	in_host 1 "$shim" sh -c
	printf '#!/bin/sh\nshift\nexec %s"$*"\n' "$(printf '%q ' "${CMD[@]}")" >"$agent"
	chmod +x "$agent"
	printf '%s slots=1\n' "${HOSTS_ADDR[@]}" >"$work/mpi-hosts"
	for ((i = 0; i < runs; i++)); do
		log=$work/hosts_mpi_$name.$i.log
		in_host 0 "$shim" mpirun -np 2 --allow-run-as-root --timeout "$PERFTEST_LIMIT" --bind-to none \
			--hostfile "$work/mpi-hosts" --mca plm_rsh_agent "$agent" \
			--mca oob_tcp_if_include "$HOSTS_NET.0/24" "$@" "$prog"
		timeout -k 5 $((PERFTEST_LIMIT + 10)) "${CMD[@]}" >"$log" 2>&1
		rc=$?
		if ! grep -q '^mpi_lat_bw: bandwidth' "$log"; then
			# Some runs failed: the median is over the others; none passed yet: nothing to measure.
			[ -s "$work/${keys[0]}.vals" ] && continue
			fails "mpirun: $(failure "$rc" "$log")" "${keys[@]}"
			return
		fi
		awk '$2 == "latency" { print $5 }' "$log" >>"$work/${keys[0]}.vals"
		awk '$2 == "bandwidth" { printf "%.3f\n", $5 * 8 / 1000 }' "$log" >>"$work/${keys[1]}.vals"
		progress "hosts_mpi_$name run $i: $(grep '^mpi_lat_bw' "$log" | tr '\n' ' ')"
	done
}

# hosts_start KEYS [ENV...]: hosts_up, or every key of KEYS says why not.
hosts_start() {
	local key_list=$1
	shift
	hosts_up "$@" >"$work/hosts.why" && return
	hosts_down
	# shellcheck disable=SC2086 # a list
	fails "$(cat "$work/hosts.why")" $key_list
	return 1
}

# Everything between two hosts: UCX and Open MPI by their own choice over
# rocemu and over TCP; then the first two with real-time daemons
# (ROCEMU_REALTIME=1), under keys ending in _rt, where allowed.
hosts_side() { # KEYS RT_KEYS
	if hosts_start "$1"; then
		hosts_ucx_runs ucx default
		hosts_ucx_runs tcp tcp
		hosts_mpi_runs ucx 1 --mca pml ''
		hosts_mpi_runs tcp 0 --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$HOSTS_NET.0/24"
		hosts_down
	fi
	if ! chrt -f 1 true 2>/dev/null; then
		# shellcheck disable=SC2086 # a list
		fails "no real-time priority here (CAP_SYS_NICE or RLIMIT_RTPRIO)" $2
	elif hosts_start "$2" ROCEMU_REALTIME=1; then
		hosts_ucx_runs ucx default _rt
		hosts_mpi_runs ucx_rt 1 --mca pml ''
		hosts_down
	fi
}
