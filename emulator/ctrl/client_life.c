/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/ctrl/client_life.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "emulator/cm/cm.h"
#include "emulator/eth/flow.h"
#include "emulator/mem/mm.h"
#include "emulator/mem/mw.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/mem/ufile.h"
#include "emulator/obj/comp_channel.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/reserved_qpn.h"
#include "emulator/wq/rwq_ind_table.h"
#include "emulator/obj/srq.h"
#include "emulator/wq/wq.h"
#include "emulator/obj/xrcd.h"
#include "emulator/observe/trace.h"
#include "emulator/sched/idle.h"
#include "emulator/xrc/xrc.h"
#include "rocemu/log.h"

static void read_comm(pid_t pid, char *comm, size_t len)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, len - 1);
		close(fd);
	}
	if (n <= 0) {
		snprintf(comm, len, "?");
		return;
	}
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
}

struct rocemu_client *rocemu_client_new(struct rocemu_emu *emu, int sock, pid_t pid, uid_t uid)
{
	struct rocemu_client *c = calloc(1, sizeof(*c));
	struct rocemu_account *a;
	int err;

	if (!c)
		return NULL;
	read_comm(pid, c->comm, sizeof(c->comm));
	a = rocemu_account_of(emu, pid, c->comm);
	err = a ? rocemu_charge_account(a, NULL, &c->charge, ROCEMU_RES_CONN,
					(struct rocemu_amount){ .fds = 1 }) : -ENOMEM;
	if (err) {
		free(c);
		errno = -err;
		return NULL;
	}
	c->emu = emu;
	c->sock = sock;
	c->pid = pid;
	c->uid = uid;
	c->async_fd = -1;
	c->kick_fd = -1;
	c->pidfd = -1;
	c->req_fd = -1;
	rocemu_list_init(&c->mws);
	rocemu_list_init(&c->channels);
	rocemu_list_init(&c->cqs);
	rocemu_list_init(&c->qps);
	rocemu_list_init(&c->srqs);
	rocemu_list_init(&c->wqs);
	rocemu_list_init(&c->rwq_ind_tables);
	rocemu_list_init(&c->xrcd_opens);
	rocemu_list_init(&c->xrc_refs);
	rocemu_list_init(&c->reserved_qpns);
	rocemu_list_init(&c->flows);
	rocemu_list_add_tail(&emu->clients, &c->node);
	return c;
}

/* A kick only wakes the loop; the idle hook then scans the doorbells. */
static void client_kick(void *arg, int fd, uint32_t revents)
{
	struct rocemu_client *c = arg;
	uint64_t count;

	if (read(fd, &count, sizeof(count)) == sizeof(count))
		rocemu_log(ROCEMU_LOG_DEBUG, "%s pid %d kick", rocemu_client_dev_name(c), (int)c->pid);
	rocemu_idle_kick(c);
}

/* Bind c to dev and ufile f: async pipe, kick eventfd, context page in fds[0..2]. */
static int client_bind(struct rocemu_client *c, struct rocemu_device *dev, struct rocemu_ufile *f,
		       struct rocemu_open_device_resp *resp, int *fds, int *nfds)
{
	struct rocemu_emu *emu = c->emu;
	struct rocemu_amount before = c->charge.amt, conn = before;
	struct rocemu_shm shm;
	int pipefd[2], kick, kick_copy, page_fd, err;

	/* The async pipe's write end, the kick eventfd, the pidfd; the context page. */
	conn.fds += 3;
	conn.mem += rocemu_page_align(sizeof(struct rocemu_context_page));
	err = rocemu_charge_change(&c->charge, conn);
	if (err)
		return err;
	if (pipe2(pipefd, O_CLOEXEC)) {
		err = -errno;
		goto fail_charge;
	}
	/* A client that never reads its events must not stall the daemon. */
	if (fcntl(pipefd[1], F_SETFL, O_NONBLOCK))
		goto fail_errno_pipe;
	kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (kick < 0)
		goto fail_errno_pipe;
	kick_copy = fcntl(kick, F_DUPFD_CLOEXEC, 0);
	if (kick_copy < 0) {
		err = -errno;
		goto fail_kick;
	}
	page_fd = rocemu_shm_create("rocemu-context", sizeof(struct rocemu_context_page), &shm);
	if (page_fd < 0) {
		err = page_fd;
		goto fail_kick_copy;
	}
	err = rocemu_loop_watch_fd(emu->loop, kick, client_kick, c);
	if (err)
		goto fail_shm;

	c->dev = dev;
	c->ufile = f;
	f->contexts++;
	c->async_fd = pipefd[1];
	c->kick_fd = kick;
	c->context_page = shm;
	rocemu_idle_page_init(emu, c);
	memset(resp, 0, sizeof(*resp));
	rocemu_device_info(c->dev, &resp->dev);
	resp->context_page_size = (uint32_t)shm.size;
	fds[0] = pipefd[0];
	fds[1] = kick_copy;
	fds[2] = page_fd;
	*nfds = 3;
	rocemu_client_watch_pid(c);
	return 0;

fail_shm:
	rocemu_shm_destroy(&shm);
	close(page_fd);
fail_kick_copy:
	close(kick_copy);
fail_kick:
	close(kick);
	close(pipefd[0]);
	close(pipefd[1]);
	goto fail_charge;
fail_errno_pipe:
	err = -errno;
	close(pipefd[0]);
	close(pipefd[1]);
fail_charge:
	rocemu_charge_change(&c->charge, before);
	return err;
}

/* c's address space, proven by req (len bytes holding proof), for its first device. */
static int client_attach(struct rocemu_client *c, const void *req, size_t len,
			 const struct rocemu_mem_proof *proof)
{
	return c->mm ? 0 : rocemu_mm_attach(c->emu, c->pid, c->uid, req, len, proof, &c->mm);
}

int rocemu_client_open_device(struct rocemu_client *c, uint32_t dev_index, const void *req,
			      size_t len, const struct rocemu_mem_proof *proof,
			      struct rocemu_open_device_resp *resp, int *fds, int *nfds)
{
	struct rocemu_ufile *f;
	int cmd_fd, err;

	if (c->dev)
		return -EBUSY;
	if (dev_index >= c->emu->num_devices)
		return -ENODEV;
	err = client_attach(c, req, len, proof);
	if (err)
		return err;
	err = rocemu_ufile_create(&c->emu->devices[dev_index], c->charge.acct, &f, &cmd_fd);
	if (err)
		return err;
	err = client_bind(c, f->dev, f, resp, fds, nfds);
	if (err) {
		close(cmd_fd);	/* the ufile goes once the loop sees it closed */
		return err;
	}
	fds[(*nfds)++] = cmd_fd;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s open by pid %d (%s)", c->dev->name, (int)c->pid, c->comm);
	return 0;
}

int rocemu_client_import_device(struct rocemu_client *c, const uint8_t *token, const void *req,
				size_t len, const struct rocemu_mem_proof *proof,
				struct rocemu_open_device_resp *resp, int *fds, int *nfds)
{
	struct rocemu_ufile *f;
	int err;

	if (c->dev)
		return -EBUSY;
	f = rocemu_ufile_find(c->emu, token);
	if (!f)
		return -EINVAL;
	err = client_attach(c, req, len, proof);
	if (!err)
		err = client_bind(c, f->dev, f, resp, fds, nfds);
	if (!err)
		rocemu_log(ROCEMU_LOG_DEBUG, "%s imported by pid %d (%s)", c->dev->name, (int)c->pid,
			   c->comm);
	return err;
}

/* Users before what they use, as uverbs release does; its ibv_open_qp references went first. */
static const struct rocemu_obj_kind *const client_kinds[] = {
	&rocemu_flow_kind, &rocemu_qp_kind, &rocemu_rwq_ind_table_kind, &rocemu_wq_kind,
	&rocemu_srq_kind, &rocemu_xrcd_open_kind, &rocemu_cq_kind,
	&rocemu_channel_kind, &rocemu_mw_kind, &rocemu_reserved_qpn_kind,
};

void rocemu_client_free(struct rocemu_client *c)
{
	struct rocemu_emu *emu = c->emu;

	rocemu_trace_client_gone(c);
	rocemu_ucma_close(c);
	rocemu_xrc_client_release(c);
	rocemu_objs_release(emu, c, client_kinds, sizeof(client_kinds) / sizeof(client_kinds[0]));
	if (c->ufile)
		rocemu_ufile_put(c->ufile);
	if (c->kick_fd >= 0) {
		rocemu_loop_unwatch_fd(emu->loop, c->kick_fd);
		close(c->kick_fd);
	}
	if (c->async_fd >= 0)
		close(c->async_fd);
	rocemu_client_unwatch_pid(c);
	if (c->mm)
		rocemu_mm_put(c->mm);
	rocemu_shm_destroy(&c->context_page);
	rocemu_text_pages_free(&c->report);
	if (c->dev)
		rocemu_log(ROCEMU_LOG_DEBUG, "%s closed by pid %d (%s)", c->dev->name,
			   (int)c->pid, c->comm);
	rocemu_list_del(&c->node);
	rocemu_loop_unwatch_fd(emu->loop, c->sock);
	close(c->sock);
	rocemu_uncharge(&c->charge);
	free(c);
}
