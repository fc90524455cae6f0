/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Open a device's RoCEv2 UDP socket. When the address is taken, find who
 * holds it: the socket inode from /proc/net/udp{,6}, then the process
 * with an fd linked to "socket:[inode]".
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <linux/filter.h>
#include <stddef.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/udp/udp_netns.h"
#include "net/udp/udp_port.h"
#include "rocemu/log.h"

/* Default buffers (208 KiB) lose 1-10% of datagrams at full rate; 8 MiB almost none. */
#define SOCKET_BUF_BYTES (8 * 1024 * 1024)

/* Root may exceed net.core.[rw]mem_max with the FORCE variant; others get the sysctl's cap. */
static void socket_buf_grow(int fd, int opt, int force_opt)
{
	int bytes = SOCKET_BUF_BYTES;

	if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)) &&
	    setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes)))
		rocemu_log(ROCEMU_LOG_DEBUG, "udp port: cannot grow socket buffer: %s",
			   strerror(errno));
}

/* 1 when a socket bound to a (0 = any) blocks binding b on the same port. */
static int addr_overlaps(uint32_t a, uint32_t b)
{
	return a == b || a == htonl(INADDR_ANY) || b == htonl(INADDR_ANY);
}

/*
 * The inode of a UDP socket bound to ipv4_be:port, 0 if none is listed.
 * /proc prints each 32-bit word of an address as a native-endian number,
 * so a parsed word equals the network-order value as stored in memory.
 */
static unsigned long udp_socket_inode(uint32_t ipv4_be, uint16_t port)
{
	static const char *const tables[] = { "/proc/net/udp", "/proc/net/udp6" };
	unsigned long inode = 0;
	char line[512];

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]) && !inode; t++) {
		FILE *f = fopen(tables[t], "r");

		if (!f)
			continue;
		while (!inode && fgets(line, sizeof(line), f)) {
			unsigned int w[4], lport;
			unsigned long ino;
			int match;

			if (t == 0) {
				match = sscanf(line, " %*d: %8X:%4X %*X:%*X %*X %*X:%*X %*X:%*X %*X %*u %*u %lu",
					       &w[0], &lport, &ino) == 3 &&
					addr_overlaps(w[0], ipv4_be);
			} else {
				/* :: (dual stack) or ::ffff:a.b.c.d blocks an IPv4 bind. */
				match = sscanf(line, " %*d: %8X%8X%8X%8X:%4X %*X:%*X %*X %*X:%*X %*X:%*X %*X %*u %*u %lu",
					       &w[0], &w[1], &w[2], &w[3], &lport, &ino) == 6 &&
					!w[0] && !w[1] &&
					((!w[2] && !w[3]) ||
					 (w[2] == htonl(0xffff) && addr_overlaps(w[3], ipv4_be)));
			}
			if (match && lport == port)
				inode = ino;
		}
		fclose(f);
	}
	return inode;
}

/* The first process with an fd on socket inode: its pid (0 if none visible) and comm. */
static pid_t socket_owner(unsigned long inode, char *comm, size_t commlen)
{
	char want[64], path[64], link[64];
	DIR *proc = opendir("/proc");
	struct dirent *p;
	pid_t owner = 0;

	if (!proc)
		return 0;
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	while (!owner && (p = readdir(proc))) {
		int pid = isdigit((unsigned char)p->d_name[0]) ? atoi(p->d_name) : 0;
		struct dirent *f;
		DIR *fds;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = opendir(path);
		if (!fds)
			continue;
		while (!owner && (f = readdir(fds))) {
			ssize_t n = readlinkat(dirfd(fds), f->d_name, link, sizeof(link) - 1);

			if (n > 0 && (link[n] = '\0', !strcmp(link, want)))
				owner = pid;
		}
		closedir(fds);
	}
	closedir(proc);
	if (owner) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)owner);
		f = fopen(path, "r");
		if (!f || !fgets(comm, (int)commlen, f))
			snprintf(comm, commlen, "?");
		comm[strcspn(comm, "\n")] = '\0';
		if (f)
			fclose(f);
	}
	return owner;
}

static void explain_in_use(const char *addr, uint32_t ipv4_be, uint16_t port, char *err,
			   size_t errlen)
{
	unsigned long inode = udp_socket_inode(ipv4_be, port);
	char comm[64];
	pid_t pid = inode ? socket_owner(inode, comm, sizeof(comm)) : 0;

	if (pid)
		snprintf(err, errlen, "%s is already in use by pid %d (%s)", addr, (int)pid, comm);
	else
		snprintf(err, errlen, "%s is already in use", addr);
}

/* How long a port no process holds may take to come free: the kernel ends an exited io_uring later. */
#define RELEASE_WAIT_MS 2000
#define RELEASE_POLL_MS 20

/*
 * Bind fd to sa; a port in use by no process (a daemon that just exited,
 * whose sockets the kernel is still letting go) is tried again for a while.
 */
static int bind_released(int fd, const struct sockaddr_in *sa)
{
	const struct timespec pause = { 0, RELEASE_POLL_MS * 1000000L };
	int waited = 0;
	char comm[8];

	while (bind(fd, (const struct sockaddr *)sa, sizeof(*sa))) {
		unsigned long inode;

		if (errno != EADDRINUSE || waited >= RELEASE_WAIT_MS)
			return -1;
		inode = udp_socket_inode(sa->sin_addr.s_addr, ntohs(sa->sin_port));
		if (inode && socket_owner(inode, comm, sizeof(comm))) {
			errno = EADDRINUSE;
			return -1;
		}
		nanosleep(&pause, NULL);
		waited += RELEASE_POLL_MS;
	}
	return 0;
}

/* What a receive may learn of the IPv4 header and the time, for captures and GRHs. */
static int rx_details_on(int fd)
{
	int on = 1;

	return setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &on, sizeof(on)) ||
	       setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on)) ||
	       setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) ? -1 : 0;
}

uint8_t rocemu_udp_port_ttl(int fd, bool multicast)
{
	int ttl;
	socklen_t len = sizeof(ttl);

	if (getsockopt(fd, IPPROTO_IP, multicast ? IP_MULTICAST_TTL : IP_TTL, &ttl, &len) ||
	    ttl < 0 || ttl > UINT8_MAX)
		return multicast ? ROCEMU_IPV4_MCAST_TTL_DEFAULT : ROCEMU_IPV4_TTL_DEFAULT;
	return (uint8_t)ttl;
}

/* Bind with SO_REUSEPORT: a device's two receiving sockets share its address (rocemu_udp_port_open_rx). */
static int port_open(uint32_t ipv4_be, uint16_t port, bool shared, char *err, size_t errlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = ipv4_be };
	char ip[INET_ADDRSTRLEN], addr[INET_ADDRSTRLEN + 8], scratch[8];
	int pmtu = IP_PMTUDISC_DO, on = 1;
	const char *step;
	int fd, rc;

	if (!err || !errlen) {
		err = scratch;
		errlen = sizeof(scratch);
	}
	inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
	snprintf(addr, sizeof(addr), "%s:%u", ip, port);
	fd = rocemu_udp_socket();
	if (fd < 0) {
		rc = fd;
		snprintf(err, errlen, "cannot open a UDP socket for %s: %s", addr, strerror(-rc));
		return rc;
	}
	/* DF, and so IPv4 ID 0 on a single datagram (rocemu_ipv4_send_id): the ICRC covers them. */
	step = "set IP_PMTUDISC_DO on";
	if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)))
		goto fail;
	socket_buf_grow(fd, SO_RCVBUF, SO_RCVBUFFORCE);
	socket_buf_grow(fd, SO_SNDBUF, SO_SNDBUFFORCE);
	/* Multicast leaves by the device's own interface (and loops back to its neighbours). */
	step = "set IP_MULTICAST_IF on";
	if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &sa.sin_addr, sizeof(sa.sin_addr)))
		goto fail;
	if (setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof(on)))
		rocemu_log(ROCEMU_LOG_DEBUG, "udp port %s: no UDP_GRO (%s)", addr, strerror(errno));
	step = "ask for each datagram's TTL, TOS and time";
	if (rx_details_on(fd))
		goto fail;
	step = "share the address with the device's other socket";
	if (shared && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)))
		goto fail;
	step = "bind";
	/* A source port (no err wanted) has a fallback: no waiting for it. */
	if (err == scratch ? bind(fd, (struct sockaddr *)&sa, sizeof(sa)) : bind_released(fd, &sa))
		goto fail;
	return fd;
fail:
	rc = -errno;
	close(fd);
	if (rc == -EADDRINUSE && err != scratch)
		explain_in_use(addr, ipv4_be, port, err, errlen);
	else
		snprintf(err, errlen, "cannot %s %s: %s", step, addr, strerror(-rc));
	return rc;
}

int rocemu_udp_port_open(uint32_t ipv4_be, uint16_t port, char *err, size_t errlen)
{
	return port_open(ipv4_be, port, false, err, errlen);
}

/*
 * The classic BPF program of a device's SO_REUSEPORT group: a datagram
 * whose UDP checksum is 0 goes to the group's second socket, any other to
 * the first. RoCEv2 carries no IPv4 options; with some, the load misses
 * the field and only the capture's checksum of that datagram may be off.
 */
static int steer_by_checksum(int fd)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS,
			 (uint32_t)SKF_NET_OFF + sizeof(struct iphdr) + offsetof(struct udphdr, check)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 1),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	const struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog));
}

int rocemu_udp_port_open_rx(uint32_t ipv4_be, int fds[2], char *err, size_t errlen)
{
	/* A plain bind first: the address is free, or says who holds it, and no one can share it. */
	int fd = port_open(ipv4_be, ROCEMU_ROCEV2_PORT, false, err, errlen);

	if (fd < 0)
		return fd;
	close(fd);
	fds[0] = port_open(ipv4_be, ROCEMU_ROCEV2_PORT, true, err, errlen);
	if (fds[0] < 0)
		return fds[0];
	fds[1] = port_open(ipv4_be, ROCEMU_ROCEV2_PORT, true, NULL, 0);
	if (fds[1] >= 0 && steer_by_checksum(fds[0])) {
		rocemu_log(ROCEMU_LOG_DEBUG, "udp port: no SO_ATTACH_REUSEPORT_CBPF (%s): one socket",
			   strerror(errno));
		close(fds[1]);
		fds[1] = -1;
	}
	if (fds[1] < 0)
		fds[1] = -1;
	return 0;
}

int rocemu_udp_group_open(uint32_t group_be, uint32_t ifaddr_be)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(ROCEMU_ROCEV2_PORT),
				  .sin_addr.s_addr = group_be };
	struct ip_mreq mreq = { .imr_multiaddr.s_addr = group_be,
				.imr_interface.s_addr = ifaddr_be };
	int on = 1, off = 0, fd, rc;

	fd = rocemu_udp_socket();
	if (fd < 0)
		return fd;
	socket_buf_grow(fd, SO_RCVBUF, SO_RCVBUFFORCE);
	/* Every device of the host that joined gets its own copy; only groups this socket joined. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_ALL, &off, sizeof(off)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || rx_details_on(fd) ||
	    setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq))) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}
