/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The device list: real devices first (unless ROCEMU_ONLY=1), then the
 * daemon's. Emulated struct ibv_device objects live in a static table for
 * the life of the process, so "is this device ours" is a range test.
 */
#include "lib/shim.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocemu/log.h"

#define ROCEMU_DEVICE_SLOTS (4 * ROCEMU_MAX_DEVICES)

static struct rocemu_device devices[ROCEMU_DEVICE_SLOTS];
static unsigned int num_devices;
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

/* Lists handed out, so ibv_free_device_list can give the real part back. */
struct device_list {
	struct ibv_device **ours;
	struct ibv_device **real;
	struct device_list *next;
};
static struct device_list *lists;

struct rocemu_device *rocemu_device_of(struct ibv_device *dev)
{
	uintptr_t p = (uintptr_t)dev, first = (uintptr_t)devices;

	if (p < first || p >= first + sizeof(devices))
		return NULL;
	return (struct rocemu_device *)dev;
}

const struct ibv_device *rocemu_device_named(const char *name, size_t len, bool by_dev_name)
{
	const struct ibv_device *found = NULL;
	unsigned int i;

	pthread_mutex_lock(&devices_lock);
	for (i = 0; i < num_devices && !found; i++) {
		const char *n = by_dev_name ? devices[i].ibdev.dev_name : devices[i].ibdev.name;

		if (strnlen(n, IBV_SYSFS_NAME_MAX) == len && !memcmp(n, name, len))
			found = &devices[i].ibdev;
	}
	pthread_mutex_unlock(&devices_lock);
	return found;
}

bool rocemu_devices_listed(void)
{
	bool listed;

	pthread_mutex_lock(&devices_lock);
	listed = num_devices > 0;
	pthread_mutex_unlock(&devices_lock);
	return listed;
}

/* Find or create the object for info; caller holds devices_lock. */
static struct rocemu_device *device_update(const struct rocemu_dev_info *info,
					   const char *ibdev_root)
{
	struct rocemu_device *d;
	unsigned int i;

	for (i = 0; i < num_devices; i++)
		if (!strncmp(devices[i].info.name, info->name, sizeof(info->name)))
			break;
	if (i == ROCEMU_DEVICE_SLOTS)
		return NULL;
	d = &devices[i];
	if (i == num_devices) {
		d->ibdev.node_type = IBV_NODE_CA;
		d->ibdev.transport_type = IBV_TRANSPORT_IB;
		/* IBV_SYSFS_NAME_MAX == ROCEMU_DEV_NAME_MAX; the last byte stays NUL */
		memcpy(d->ibdev.name, info->name, sizeof(d->ibdev.name) - 1);
		snprintf(d->ibdev.dev_name, sizeof(d->ibdev.dev_name), "uverbs%u", info->index);
		snprintf(d->ibdev.ibdev_path, sizeof(d->ibdev.ibdev_path), "%s/%.*s",
			 ibdev_root, (int)sizeof(info->name), info->name);
		memcpy(d->ibdev.dev_path, d->ibdev.ibdev_path, sizeof(d->ibdev.dev_path));
		num_devices++;
	}
	d->info = *info;
	return d;
}

/* HELLO on a short connection. Returns 0 or -errno. */
static int daemon_hello(struct rocemu_hello_resp *resp)
{
	struct rocemu_hello_req req = { .pid = (uint32_t)getpid() };
	struct rocemu_conn conn;
	int err;

	err = rocemu_conn_open(&conn);
	if (err)
		return err;
	err = rocemu_conn_call(&conn, ROCEMU_OP_HELLO, &req, resp, NULL, 0);
	rocemu_conn_close(&conn);
	if (!err && resp->num_devices > ROCEMU_MAX_DEVICES)
		err = -EPROTO;
	resp->ibdev_root[sizeof(resp->ibdev_root) - 1] = '\0';
	return err;
}

static void warn_once(int err)
{
	static bool warned;

	if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
		rocemu_log(ROCEMU_LOG_WARN, "no rocemud: %s; emulated devices not listed",
			   strerror(-err));
}

static bool rocemu_only(void)
{
	const char *env = getenv("ROCEMU_ONLY");

	return env && !strcmp(env, "1");
}

struct ibv_device **ibv_get_device_list(int *num)
{
	struct ibv_device **real = NULL, **list;
	struct rocemu_hello_resp hello;
	struct device_list *entry;
	int nreal = 0, real_errno = ENOSYS, n, err;
	uint32_t i;

	if (!rocemu_only()) {
		real = REAL(ibv_get_device_list)(&nreal);
		if (!real) {
			real_errno = errno;
			nreal = 0;
		}
	}
	err = daemon_hello(&hello);
	if (err) {
		warn_once(err);
		if (num)
			*num = real ? nreal : 0;
		errno = rocemu_only() ? -err : real_errno;
		return real;
	}
	list = calloc(nreal + hello.num_devices + 1, sizeof(*list));
	entry = malloc(sizeof(*entry));
	if (!list || !entry) {
		free(list);
		free(entry);
		if (real)
			REAL(ibv_free_device_list)(real);
		errno = ENOMEM;
		return NULL;
	}
	for (n = 0; n < nreal; n++)
		list[n] = real[n];
	pthread_mutex_lock(&devices_lock);
	for (i = 0; i < hello.num_devices; i++) {
		struct rocemu_device *d = device_update(&hello.devices[i], hello.ibdev_root);

		if (d)
			list[n++] = &d->ibdev;
	}
	entry->ours = list;
	entry->real = real;
	entry->next = lists;
	lists = entry;
	pthread_mutex_unlock(&devices_lock);
	if (num)
		*num = n;
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	struct device_list **p, *entry = NULL;

	pthread_mutex_lock(&devices_lock);
	for (p = &lists; *p; p = &(*p)->next) {
		if ((*p)->ours == list) {
			entry = *p;
			*p = entry->next;
			break;
		}
	}
	pthread_mutex_unlock(&devices_lock);
	if (!entry) {
		REAL(ibv_free_device_list)(list);
		return;
	}
	if (entry->real)
		REAL(ibv_free_device_list)(entry->real);
	free(entry->ours);
	free(entry);
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	struct rocemu_device *d = rocemu_device_of(device);

	if (!d)
		return REAL(ibv_get_device_guid)(device);
	return d->info.node_guid;	/* already in network order */
}

int ibv_get_device_index(struct ibv_device *device)
{
	struct rocemu_device *d = rocemu_device_of(device);

	if (!d)
		return REAL(ibv_get_device_index)(device);
	return (int)d->info.index;
}
