/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/ctrl/device_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdbool.h>
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

/* mac=xx:xx:xx:xx:xx:xx: a unicast MAC, not 0 (a port's own address). */
static int option_mac(struct rocemu_device *dev, const char *text, char *err, size_t errlen)
{
	uint8_t mac[6];
	int used = 0;

	if (strlen(text) != 17 ||
	    sscanf(text, "%2hhx:%2hhx:%2hhx:%2hhx:%2hhx:%2hhx%n", &mac[0], &mac[1], &mac[2],
		   &mac[3], &mac[4], &mac[5], &used) != 6 || used != 17 ||
	    strspn(text, "0123456789abcdefABCDEF:") != 17) {
		snprintf(err, errlen, "device %s: MAC \"%s\" is not xx:xx:xx:xx:xx:xx", dev->name,
			 text);
		return -EINVAL;
	}
	if (mac[0] & 1) {
		snprintf(err, errlen, "device %s: MAC %s is a multicast address, a port needs a unicast one",
			 dev->name, text);
		return -EINVAL;
	}
	if (!(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5])) {
		snprintf(err, errlen, "device %s: MAC %s is all zeros", dev->name, text);
		return -EINVAL;
	}
	rocemu_device_set_mac(dev, mac);
	return 0;
}

/* vxlan=VNI: 0 to 2^24 - 1, decimal. */
static int option_vni(struct rocemu_device *dev, const char *text, char *err, size_t errlen)
{
	unsigned long vni;
	char *end;

	errno = 0;
	vni = strtoul(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || vni > ROCEMU_VXLAN_VNI_MAX) {
		snprintf(err, errlen, "device %s: VNI \"%s\" is not a number from 0 to %u", dev->name,
			 text, ROCEMU_VXLAN_VNI_MAX);
		return -EINVAL;
	}
	dev->vxlan.on = true;
	dev->vxlan.vni = (uint32_t)vni;
	return 0;
}

/* vxlan_remote=IP[+IP...]: unicast IPv4 VTEPs, none the device's own, none twice. */
static int option_remotes(struct rocemu_device *dev, char *text, char *err, size_t errlen)
{
	struct rocemu_vxlan_port *v = &dev->vxlan;
	char *one, *save = NULL;
	struct in_addr ip;

	for (one = strtok_r(text, "+", &save); one; one = strtok_r(NULL, "+", &save)) {
		uint32_t host;

		if (inet_pton(AF_INET, one, &ip) != 1) {
			snprintf(err, errlen, "device %s: VXLAN remote \"%s\" is not an IPv4 address",
				 dev->name, one);
			return -EINVAL;
		}
		host = ntohl(ip.s_addr);
		if (!host || host == INADDR_BROADCAST || IN_MULTICAST(host) ||
		    ip.s_addr == dev->ipv4) {
			snprintf(err, errlen, "device %s: VXLAN remote %s is not another host's unicast address",
				 dev->name, one);
			return -EINVAL;
		}
		for (unsigned int i = 0; i < v->num_remotes; i++) {
			if (v->remotes[i] == ip.s_addr) {
				snprintf(err, errlen, "device %s: VXLAN remote %s is listed twice",
					 dev->name, one);
				return -EINVAL;
			}
		}
		if (v->num_remotes == ROCEMU_VXLAN_MAX_REMOTES) {
			snprintf(err, errlen, "device %s: more than %d VXLAN remotes", dev->name,
				 ROCEMU_VXLAN_MAX_REMOTES);
			return -EINVAL;
		}
		v->remotes[v->num_remotes++] = ip.s_addr;
	}
	if (!v->num_remotes) {
		snprintf(err, errlen, "device %s: vxlan_remote names no address", dev->name);
		return -EINVAL;
	}
	return 0;
}

enum device_option { OPT_MAC, OPT_VXLAN, OPT_VXLAN_REMOTE, OPT_COUNT };
static const char *const option_keys[OPT_COUNT] = {
	[OPT_MAC] = "mac", [OPT_VXLAN] = "vxlan", [OPT_VXLAN_REMOTE] = "vxlan_remote",
};

/* The `key=value` options of dev's entry, '/'-separated in opts (modified in place). */
static int parse_options(struct rocemu_device *dev, char *opts, char *err, size_t errlen)
{
	bool seen[OPT_COUNT] = { false };
	char *field, *value;
	int o, ret = 0;

	while (!ret && (field = strsep(&opts, "/"))) {
		value = strchr(field, '=');
		if (value)
			*value++ = '\0';
		for (o = 0; o < OPT_COUNT && strcmp(field, option_keys[o]); o++)
			;
		if (!value || o == OPT_COUNT) {
			snprintf(err, errlen, "device %s: \"%s\" is no option (mac=, vxlan=, vxlan_remote=)",
				 dev->name, field);
			return -EINVAL;
		}
		if (seen[o]) {
			snprintf(err, errlen, "device %s: %s is given twice", dev->name, field);
			return -EINVAL;
		}
		seen[o] = true;
		if (o == OPT_MAC)
			ret = option_mac(dev, value, err, errlen);
		else if (o == OPT_VXLAN)
			ret = option_vni(dev, value, err, errlen);
		else
			ret = option_remotes(dev, value, err, errlen);
	}
	if (!ret && seen[OPT_VXLAN_REMOTE] && !seen[OPT_VXLAN]) {
		snprintf(err, errlen, "device %s: vxlan_remote needs vxlan=VNI", dev->name);
		return -EINVAL;
	}
	return ret;
}

/* The adapter after '@' in an entry: "cx5" (the default) or "cx3". */
static int parse_model(const char *name, const char *text, enum rocemu_model *model, char *err,
		       size_t errlen)
{
	if (!strcmp(text, "cx5"))
		*model = ROCEMU_MODEL_CX5;
	else if (!strcmp(text, "cx3"))
		*model = ROCEMU_MODEL_CX3;
	else {
		snprintf(err, errlen, "device %s: \"%s\" is no adapter (cx5, cx3)", name, text);
		return -EINVAL;
	}
	return 0;
}

/* Parse one `name=ipv4[@model][/mtu][/key=value...]` entry (modified in place) as device number n. */
static int parse_entry(char *entry, unsigned int n, struct rocemu_device *devs,
		       char *err, size_t errlen)
{
	char *addr = strchr(entry, '='), *opts, *mtu_text = NULL, *end, *model_text;
	enum rocemu_model model = ROCEMU_MODEL_CX5;
	struct in_addr ip;
	unsigned long mtu = ROCEMU_DEFAULT_NETDEV_MTU;
	unsigned int i;
	int ret;

	if (!addr) {
		snprintf(err, errlen, "entry \"%s\": expected NAME=IPV4[@MODEL][/MTU][/KEY=VALUE...]",
			 entry);
		return -EINVAL;
	}
	*addr++ = '\0';
	if (!name_valid(entry)) {
		snprintf(err, errlen, "device name \"%s\": use 1 to %d letters, digits, '_', '-', '.'",
			 entry, ROCEMU_DEV_NAME_MAX - 1);
		return -EINVAL;
	}
	opts = strchr(addr, '/');
	if (opts)
		*opts++ = '\0';
	model_text = strchr(addr, '@');
	if (model_text) {
		*model_text++ = '\0';
		ret = parse_model(entry, model_text, &model, err, errlen);
		if (ret)
			return ret;
	}
	/* The first field after the address is the MTU unless it is an option. */
	if (opts && !memchr(opts, '=', strcspn(opts, "/"))) {
		mtu_text = strsep(&opts, "/");
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
	devs[n].model = model;
	ret = opts ? parse_options(&devs[n], opts, err, errlen) : 0;
	/* The daemon's switch tells its ports apart by MAC. */
	for (i = 0; i < n && !ret; i++) {
		if (!memcmp(devs[i].mac, devs[n].mac, sizeof(devs[n].mac))) {
			snprintf(err, errlen, "devices %s and %s have the same MAC", devs[i].name,
				 entry);
			ret = -EINVAL;
		}
	}
	return ret;
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
