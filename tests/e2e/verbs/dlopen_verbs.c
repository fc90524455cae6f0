/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A program that does not link libibverbs but loads it at run time, as
 * UCX and MPI load their RDMA modules: dlopen(RTLD_LOCAL) keeps the library
 * out of the global scope, and the verbs are reached as a module linked
 * against libibverbs would reach them. Under the shim they must find the
 * emulated devices.
 *
 *   dlopen_verbs   prints "device NAME port STATE" per device; exit 0 if any
 */
#include <dlfcn.h>
#include <stdio.h>
#include <infiniband/verbs.h>

int main(void)
{
	struct ibv_device **(*get_list)(int *);
	void (*free_list)(struct ibv_device **);
	struct ibv_context *(*open_device)(struct ibv_device *);
	int (*close_device)(struct ibv_context *);
	int (*query_port)(struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *);
	struct ibv_device **list;
	int n = 0;

	if (!dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL)) {
		fprintf(stderr, "dlopen libibverbs: %s\n", dlerror());
		return 1;
	}
	/* The global scope: the shim when it is preloaded, as for a module's own references. */
	get_list = (struct ibv_device **(*)(int *))dlsym(RTLD_DEFAULT, "ibv_get_device_list");
	free_list = (void (*)(struct ibv_device **))dlsym(RTLD_DEFAULT, "ibv_free_device_list");
	open_device = (struct ibv_context *(*)(struct ibv_device *))dlsym(RTLD_DEFAULT, "ibv_open_device");
	close_device = (int (*)(struct ibv_context *))dlsym(RTLD_DEFAULT, "ibv_close_device");
	query_port = (int (*)(struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *))
		dlsym(RTLD_DEFAULT, "ibv_query_port");
	if (!get_list || !free_list || !open_device || !close_device || !query_port) {
		fprintf(stderr, "verbs not in the global scope (is the shim preloaded?)\n");
		return 1;
	}
	list = get_list(&n);
	for (int i = 0; list && i < n; i++) {
		struct ibv_context *ctx = open_device(list[i]);
		struct ibv_port_attr attr;

		if (!ctx || query_port(ctx, 1, (struct _compat_ibv_port_attr *)&attr)) {
			printf("device %s cannot be opened or queried\n", list[i]->name);
			return 1;
		}
		printf("device %s port %s\n", list[i]->name,
		       attr.state == IBV_PORT_ACTIVE ? "ACTIVE" : "not active");
		close_device(ctx);
	}
	if (list)
		free_list(list);
	return n > 0 ? 0 : 1;
}
