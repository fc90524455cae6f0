/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/rc/resp_atomic.h"

#include <errno.h>
#include <sys/uio.h>
#include <infiniband/verbs.h>

#include "emulator/core/client.h"
#include "emulator/mem/dma.h"
#include "emulator/obj/qp.h"
#include "emulator/rc/rc.h"
#include "net/roce/roce_hdr.h"

#define ATOMIC_BYTES 8

int rocemu_atomic_execute(const struct rocemu_qp *qp, const uint8_t *atmeth, bool cmp_swap,
			  uint64_t *orig)
{
	uint64_t va = rocemu_atmeth_va(atmeth), value;
	struct iovec local = { &value, ATOMIC_BYTES };
	struct rocemu_dma_seg remote;
	unsigned int n;
	int err;

	/* IBTA C9-139: misaligned atomics are invalid requests. */
	if (va & (ATOMIC_BYTES - 1))
		return -EINVAL;
	/* Its 8 bytes are one piece of memory, also through an indirect key. */
	err = rocemu_dma_rkey(qp->mem, rocemu_atmeth_rkey(atmeth), va, ATOMIC_BYTES,
			      IBV_ACCESS_REMOTE_ATOMIC, &remote, 1, &n);
	if (err)
		return err;
	err = rocemu_dma_copy(qp->mem.client->mm, &local, 1, &remote, 1, false);
	if (err)
		return err;
	*orig = value;
	if (cmp_swap) {
		if (value != rocemu_atmeth_compare(atmeth))
			return 0;	/* no match: nothing is written */
		value = rocemu_atmeth_swap_add(atmeth);
	} else {
		value += rocemu_atmeth_swap_add(atmeth);
	}
	return rocemu_dma_copy(qp->mem.client->mm, &local, 1, &remote, 1, true);
}

void rocemu_atomic_replay_save(struct rocemu_rc_resp *resp, uint32_t depth, uint32_t psn,
			       uint64_t orig)
{
	struct rocemu_atomic_replay *r;

	if (!depth || depth > ROCEMU_ATOMIC_REPLAY_MAX)
		depth = ROCEMU_ATOMIC_REPLAY_MAX;
	r = &resp->mem->atomics[resp->atomic_next++ % depth];
	r->psn = psn;
	r->orig = orig;
	r->valid = true;
}

bool rocemu_atomic_replay_find(const struct rocemu_rc_resp *resp, uint32_t psn, uint64_t *orig)
{
	unsigned int i;

	for (i = 0; resp->mem && i < ROCEMU_ATOMIC_REPLAY_MAX; i++) {
		if (resp->mem->atomics[i].valid && resp->mem->atomics[i].psn == psn) {
			*orig = resp->mem->atomics[i].orig;
			return true;
		}
	}
	return false;
}
