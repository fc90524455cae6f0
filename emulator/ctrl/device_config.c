/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/ctrl/device_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Smallest netdev MTU that still carries a 256-byte IB MTU plus headers. */
#define MIN_NETDEV_MTU 320
#define MAX_NETDEV_MTU 65535

static int name_valid(const char *name)
{
	const char *p;

	if (!*name || strlen(name) >= ROCEMU_DEV_NAME_MAX)
		return 0;
	for (p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.'))
			return 0;
	return 1;
}

/* The MTU of the interface that holds ip, 0 when none does (then the default stands). */
static unsigned long link_mtu_of(struct in_addr ip)
{
	struct ifaddrs *all, *ifa;
	unsigned long mtu = 0;
	struct ifreq req;
	int fd;

	if (getifaddrs(&all))
		return 0;
	for (ifa = all; ifa && !mtu; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET ||
		    ((struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr != ip.s_addr)
			continue;
		memset(&req, 0, sizeof(req));
		snprintf(req.ifr_name, sizeof(req.ifr_name), "%s", ifa->ifa_name);
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && !ioctl(fd, SIOCGIFMTU, &req) && req.ifr_mtu > 0)
			mtu = (unsigned long)req.ifr_mtu;
		if (fd >= 0)
			close(fd);
	}
	freeifaddrs(all);
	return mtu;
}

/* Parse one `name=ipv4[/mtu]` entry (modified in place) as device number n. */
static int parse_entry(char *entry, unsigned int n, struct rocemu_device *devs,
		       char *err, size_t errlen)
{
	char *addr = strchr(entry, '='), *mtu_text, *end;
	struct in_addr ip;
	unsigned long mtu = ROCEMU_DEFAULT_NETDEV_MTU;
	unsigned int i;

	if (!addr) {
		snprintf(err, errlen, "entry \"%s\": expected NAME=IPV4[/MTU]", entry);
		return -EINVAL;
	}
	*addr++ = '\0';
	if (!name_valid(entry)) {
		snprintf(err, errlen, "device name \"%s\": use 1 to %d letters, digits, '_', '-', '.'",
			 entry, ROCEMU_DEV_NAME_MAX - 1);
		return -EINVAL;
	}
	mtu_text = strchr(addr, '/');
	if (mtu_text) {
		*mtu_text++ = '\0';
		errno = 0;
		mtu = strtoul(mtu_text, &end, 10);
		if (errno || end == mtu_text || *end || mtu < MIN_NETDEV_MTU || mtu > MAX_NETDEV_MTU) {
			snprintf(err, errlen, "device %s: MTU \"%s\" is not a number from %d to %d",
				 entry, mtu_text, MIN_NETDEV_MTU, MAX_NETDEV_MTU);
			return -EINVAL;
		}
	}
	if (inet_pton(AF_INET, addr, &ip) != 1) {
		snprintf(err, errlen, "device %s: \"%s\" is not an IPv4 address", entry, addr);
		return -EINVAL;
	}
	/* As a ConnectX port's MTU follows its netdev: DF is set, a larger packet would be lost. */
	if (!mtu_text) {
		unsigned long link_mtu = link_mtu_of(ip);

		if (link_mtu >= MIN_NETDEV_MTU && link_mtu < mtu)
			mtu = link_mtu;
	}
	for (i = 0; i < n; i++) {
		if (!strcmp(devs[i].name, entry)) {
			snprintf(err, errlen, "device %s is listed twice", entry);
			return -EINVAL;
		}
		if (devs[i].ipv4 == ip.s_addr) {
			snprintf(err, errlen, "devices %s and %s have the same address %s",
				 devs[i].name, entry, addr);
			return -EINVAL;
		}
	}
	rocemu_device_init(&devs[n], n, entry, ip.s_addr, (uint32_t)mtu);
	return 0;
}

int rocemu_devices_parse(const char *spec, struct rocemu_device *devs, unsigned int *count,
			 char *err, size_t errlen)
{
	char *copy, *entry, *save = NULL;
	unsigned int n = 0;
	int ret = 0;

	if (!spec || !*spec)
		spec = ROCEMU_DEFAULT_DEVICES;
	copy = strdup(spec);
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (entry = strtok_r(copy, ",", &save); entry; entry = strtok_r(NULL, ",", &save)) {
		if (n == ROCEMU_MAX_DEVICES) {
			snprintf(err, errlen, "more than %d devices", ROCEMU_MAX_DEVICES);
			ret = -EINVAL;
			break;
		}
		ret = parse_entry(entry, n, devs, err, errlen);
		if (ret)
			break;
		n++;
	}
	if (!ret && n == 0) {
		snprintf(err, errlen, "no device in \"%s\"", spec);
		ret = -EINVAL;
	}
	free(copy);
	*count = ret ? 0 : n;
	return ret;
}
