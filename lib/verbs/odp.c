/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * On-demand paging. The daemon's DMA reaches whatever the process has
 * mapped when the access happens, so an ODP MR needs no pinning: its
 * pages fault in at each access, as the kernel resolves a ConnectX's
 * page faults. ibv_advise_mr's checks are the daemon's (it knows the
 * MRs); the prefetch itself is done here, in the process that owns the
 * pages, with MADV_POPULATE_READ/WRITE, as the kernel faults them in.
 */
#include "lib/shim.h"

#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

/* ODP transport caps of a ConnectX-5 on RoCE (mlx5_ib_internal_fill_odp_caps). */
#define CX5_RC_ODP_CAPS (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE | \
			 IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV)

void rocemu_odp_caps(struct ibv_device_attr_ex *attr)
{
	attr->odp_caps.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
	attr->odp_caps.per_transport_caps.rc_odp_caps = CX5_RC_ODP_CAPS;
	attr->odp_caps.per_transport_caps.uc_odp_caps = 0;
	attr->odp_caps.per_transport_caps.ud_odp_caps = IBV_ODP_SUPPORT_SEND;
	if (attr->orig_attr.device_cap_flags & IBV_DEVICE_XRC)
		attr->xrc_odp_caps = ROCEMU_SRQ_TRANSPORT_ODP_CAPS;
}

/* Fault in [addr, addr + length) of this process; 0 or EFAULT, as pagefault_mr. */
static int populate(uint64_t addr, uint64_t length, bool write)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start = addr & ~(page - 1);
	uint64_t end = (addr + length + page - 1) & ~(page - 1);

	if (!length)
		return 0;
	if (end <= start)
		return EFAULT;	/* past the top of the address space */
	return madvise((void *)(uintptr_t)start, end - start,
		       write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) ? EFAULT : 0;
}

int rocemu_advise_mr_op(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
			struct ibv_sge *sg_list, uint32_t num_sge)
{
	struct rocemu_advise_mr_req req = {
		.pdn = to_rpd(pd)->pdn,
		.advice = (uint32_t)advice,
		.flags = flags,
	};
	struct rocemu_advise_mr_resp resp;
	bool write = advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	uint32_t done = 0, i;
	int err;

	do {
		/* An empty list goes to the daemon too, which refuses it as uverbs does. */
		req.num_sge = num_sge - done < ROCEMU_ADVISE_MR_MAX_SGE ? num_sge - done
									: ROCEMU_ADVISE_MR_MAX_SGE;
		if (req.num_sge)
			memcpy(req.sge, &sg_list[done], req.num_sge * sizeof(*sg_list));
		err = rocemu_conn_call(&to_rctx(pd->context)->conn, ROCEMU_OP_ADVISE_MR, &req,
				       &resp, NULL, 0);
		if (err)
			return rocemu_errno_value(err);
		for (i = 0; i < req.num_sge; i++) {
			err = populate(resp.range[i].addr, resp.range[i].length, write);
			/* Only a flushed prefetch reports its faults; another is best effort. */
			if (err && (flags & IBV_ADVISE_MR_FLAG_FLUSH))
				return err;
		}
		done += req.num_sge;
	} while (done < num_sge);
	return 0;
}
