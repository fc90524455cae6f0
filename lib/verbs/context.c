/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Opening an emulated device: a control connection of its own, bound by
 * OPEN_DEVICE, and a struct verbs_context whose op tables carry the inline
 * verbs of verbs.h to the shim. async_fd is the daemon's event pipe;
 * cmd_fd names the context's object space (emulator/mem/ufile.h), so that
 * another process given it can ibv_import_device() a context sharing its
 * PDs, MRs and device memory.
 */
#include "lib/shim.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "rocemu/log.h"

void *rocemu_map_shared(int fd, uint64_t size)
{
	void *p;
	int saved;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	saved = errno;
	close(fd);
	if (p == MAP_FAILED) {
		errno = saved;
		return NULL;
	}
	/* A forked child gets no rings, as uverbs mappings are not copied (VM_DONTCOPY). */
	madvise(p, size, MADV_DONTFORK);
	return p;
}

static void ctx_doorbell(struct rocemu_context *rctx, bool recv)
{
	static const uint64_t one = 1;

	/* Tells the daemon which context to scan; release orders the doorbell before it. */
	__atomic_fetch_add(&rctx->page->doorbell_seq, 1, __ATOMIC_RELEASE);
	/* Pairs with the daemon's store of daemon_sleeping before it rescans and sleeps. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&rctx->page->daemon_sleeping, __ATOMIC_ACQUIRE))
		return;
	if (recv && !__atomic_load_n(&rctx->page->recv_kick, __ATOMIC_RELAXED))
		return;
	if (write(rctx->kick_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		rocemu_log(ROCEMU_LOG_WARN, "%s kick: %s", rctx->info.name, strerror(errno));
}

void rocemu_ctx_doorbell(struct rocemu_context *rctx)
{
	ctx_doorbell(rctx, false);
}

void rocemu_ctx_recv_doorbell(struct rocemu_context *rctx)
{
	ctx_doorbell(rctx, true);
}

static void context_fill_ops(struct rocemu_context *rctx)
{
	struct verbs_context *vctx = &rctx->vctx;
	struct ibv_context_ops *ops = &vctx->context.ops;

	ops->_compat_query_device = ibv_query_device;
	ops->_compat_query_port = ibv_query_port;
	ops->poll_cq = rocemu_poll_cq_op;
	ops->req_notify_cq = rocemu_req_notify_cq_op;
	ops->post_send = rocemu_post_send_op;
	ops->post_recv = rocemu_post_recv_op;
	ops->alloc_mw = rocemu_alloc_mw_op;
	ops->dealloc_mw = rocemu_dealloc_mw_op;
	ops->bind_mw = rocemu_bind_mw_op;
	ops->post_srq_recv = rocemu_post_srq_recv_op;
	if (rctx->info.model == ROCEMU_MODEL_CX3) {	/* libmlx4's rings (lib/mlx4/) */
		ops->poll_cq = rocemu_mlx4_poll_cq_op;
		ops->req_notify_cq = rocemu_mlx4_req_notify_cq_op;
		ops->post_send = rocemu_mlx4_post_send_op;
		ops->post_recv = rocemu_mlx4_post_recv_op;
		ops->post_srq_recv = rocemu_mlx4_post_srq_recv_op;
	}
	vctx->query_port = rocemu_query_port_op;
	vctx->query_device_ex = rocemu_query_device_ex_op;
	vctx->query_rt_values = rocemu_query_rt_values_op;
	vctx->create_cq_ex = rocemu_create_cq_ex_op;
	vctx->create_qp_ex = rocemu_create_qp_ex_op;
	vctx->open_qp = rocemu_open_qp_op;
	vctx->ibv_create_flow = rocemu_create_flow_op;
	vctx->ibv_destroy_flow = rocemu_destroy_flow_op;
	vctx->create_srq_ex = rocemu_create_srq_ex_op;
	vctx->get_srq_num = rocemu_get_srq_num_op;
	vctx->create_wq = rocemu_create_wq_op;
	vctx->modify_wq = rocemu_modify_wq_op;
	vctx->destroy_wq = rocemu_destroy_wq_op;
	vctx->create_rwq_ind_table = rocemu_create_rwq_ind_table_op;
	vctx->destroy_rwq_ind_table = rocemu_destroy_rwq_ind_table_op;
	vctx->open_xrcd = rocemu_open_xrcd_op;
	vctx->close_xrcd = rocemu_close_xrcd_op;
	vctx->advise_mr = rocemu_advise_mr_op;
	vctx->alloc_td = rocemu_alloc_td_op;
	vctx->dealloc_td = rocemu_dealloc_td_op;
	vctx->alloc_parent_domain = rocemu_alloc_parent_domain_op;
	vctx->alloc_dm = rocemu_alloc_dm_op;
	vctx->free_dm = rocemu_free_dm_op;
	vctx->reg_dm_mr = rocemu_reg_dm_mr_op;
	vctx->sz = sizeof(*vctx);
	vctx->context.abi_compat = __VERBS_ABI_IS_EXTENDED;
}

/* fds from OPEN_DEVICE: async pipe, kick eventfd, context page memfd, cmd_fd (not on import). */
enum { OPEN_FD_ASYNC, OPEN_FD_KICK, OPEN_FD_PAGE, OPEN_FD_CMD, OPEN_FD__COUNT };

/*
 * Connect conn and bind it with op (OPEN_DEVICE, or IMPORT_DEVICE, which
 * gives no cmd_fd); map the context page into *page. fds gets the async
 * pipe, the kick eventfd and, for OPEN_DEVICE, the cmd_fd. Returns 0, or
 * -errno with nothing left open.
 */
static int context_connect(struct rocemu_conn *conn, enum rocemu_ctrl_op op, const void *req,
			   struct rocemu_open_device_resp *resp, int *fds,
			   struct rocemu_context_page **page)
{
	int nfds = op == ROCEMU_OP_OPEN_DEVICE ? OPEN_FD__COUNT : OPEN_FD_CMD, err;

	err = rocemu_conn_open(conn);
	if (err)
		return err;
	err = rocemu_conn_call(conn, op, req, resp, fds, nfds);
	if (err)
		goto err_conn;
	if (resp->context_page_size < sizeof(**page)) {
		close(fds[OPEN_FD_PAGE]);
		err = -EPROTO;
		goto err_fds;
	}
	*page = rocemu_map_shared(fds[OPEN_FD_PAGE], resp->context_page_size);
	if (!*page) {
		err = -errno;
		goto err_fds;
	}
	return 0;

err_fds:
	close(fds[OPEN_FD_ASYNC]);
	close(fds[OPEN_FD_KICK]);
	if (nfds > OPEN_FD_CMD)
		close(fds[OPEN_FD_CMD]);
err_conn:
	rocemu_conn_close(conn);
	return err;
}

/* The header an emulated context's cmd_fd holds, peeked; false for any other fd. */
static bool cmd_fd_read(int cmd_fd, struct rocemu_cmd_file_hdr *hdr)
{
	struct stat st;

	return !fstat(cmd_fd, &st) && S_ISSOCK(st.st_mode) &&
	       recv(cmd_fd, hdr, sizeof(*hdr), MSG_PEEK | MSG_DONTWAIT) == (ssize_t)sizeof(*hdr) &&
	       hdr->magic == ROCEMU_CMD_FILE_MAGIC;
}

/* Move fd to number at (close-on-exec, with at's file status flags such as O_NONBLOCK). */
static bool fd_move(int fd, int at)
{
	int flags = fcntl(at, F_GETFL);
	bool moved = flags >= 0 && !fcntl(fd, F_SETFL, flags) && dup3(fd, at, O_CLOEXEC) == at;

	close(fd);
	return moved;
}

/*
 * A forked child's first verb on a context it inherited. uverbs lets it
 * use its parent's file; here it gets a connection of its own into the
 * same object space (IMPORT_DEVICE with the cmd_fd's token: the PDs, MRs
 * and device memory), its own event pipe, kick eventfd and context page,
 * at the fd numbers the context already has. Returns 0 or -EIO.
 */
static int context_adopt(struct rocemu_conn *conn)
{
	struct rocemu_context *rctx = container_of(conn, struct rocemu_context, conn);
	struct ibv_context *ctx = &rctx->vctx.context;
	struct rocemu_import_device_req req = { .pid = (uint32_t)getpid() };
	struct rocemu_open_device_resp resp;
	struct rocemu_context_page *page;
	struct rocemu_cmd_file_hdr hdr;
	struct rocemu_conn own;
	int fds[OPEN_FD__COUNT], err;
	bool moved;

	if (!cmd_fd_read(ctx->cmd_fd, &hdr))
		return -EIO;
	memcpy(req.token, hdr.token, sizeof(req.token));
	rocemu_mem_proof_fill(&req.mem, &req);
	err = context_connect(&own, ROCEMU_OP_IMPORT_DEVICE, &req, &resp, fds, &page);
	rocemu_mem_proof_done(&req.mem);
	if (err)
		return -EIO;
	moved = fd_move(fds[OPEN_FD_ASYNC], ctx->async_fd);
	moved &= fd_move(fds[OPEN_FD_KICK], rctx->kick_fd);
	moved &= fd_move(own.fd, conn->fd);
	pthread_mutex_destroy(&own.lock);
	if (!moved) {
		munmap(page, resp.context_page_size);
		return -EIO;
	}
	/* The parent's page is not mapped here (MADV_DONTFORK): nothing to unmap. */
	rctx->page = page;
	rctx->page_size = resp.context_page_size;
	conn->seq = own.seq;
	conn->lost = false;
	return 0;
}

/*
 * A context of dev through op (OPEN_DEVICE, or IMPORT_DEVICE with cmd_fd,
 * which the context then owns). NULL and errno on failure.
 */
static struct ibv_context *context_open(struct rocemu_device *dev, enum rocemu_ctrl_op op,
					const void *req, int cmd_fd)
{
	struct rocemu_open_device_resp resp;
	struct rocemu_context *rctx;
	struct ibv_context *ctx;
	int fds[OPEN_FD__COUNT], err;

	rctx = calloc(1, sizeof(*rctx));
	if (!rctx) {
		errno = ENOMEM;
		return NULL;
	}
	err = context_connect(&rctx->conn, op, req, &resp, fds, &rctx->page);
	if (err) {
		free(rctx);
		errno = -err;
		return NULL;
	}
	if (cmd_fd < 0)
		cmd_fd = fds[OPEN_FD_CMD];
	rctx->page_size = resp.context_page_size;
	rctx->dev = dev;
	rctx->info = resp.dev;
	rctx->conn.name = rctx->info.name;
	rctx->conn.adopt = context_adopt;
	rctx->kick_fd = fds[OPEN_FD_KICK];
	rocemu_huge_pool_init(&rctx->huge_pool);
	ctx = &rctx->vctx.context;
	ctx->device = &dev->ibdev;
	ctx->cmd_fd = cmd_fd;
	ctx->async_fd = fds[OPEN_FD_ASYNC];
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	context_fill_ops(rctx);	/* after rctx->info: the model chooses the data path */
	if (rocemu_ctx_is_mlx4(ctx))
		rocemu_mlx4_uar_register(rctx);
	rocemu_log(ROCEMU_LOG_DEBUG, "%s %s", rctx->info.name,
		   op == ROCEMU_OP_OPEN_DEVICE ? "opened" : "imported");
	return ctx;
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct rocemu_device *dev = rocemu_device_of(device);

	struct rocemu_open_device_req req = { .pid = (uint32_t)getpid() };
	struct ibv_context *ctx;

	if (!dev)
		return REAL(ibv_open_device)(device);
	req.dev_index = dev->info.index;
	rocemu_mem_proof_fill(&req.mem, &req);
	ctx = context_open(dev, ROCEMU_OP_OPEN_DEVICE, &req, -1);
	rocemu_mem_proof_done(&req.mem);
	return ctx;
}

/* The emulated device of index, from a fresh device list (as libibverbs looks it up). */
static struct rocemu_device *device_of_index(uint32_t index)
{
	struct rocemu_device *found = NULL, *d;
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	for (i = 0; list && list[i] && !found; i++) {
		d = rocemu_device_of(list[i]);
		if (d && d->info.index == index)
			found = d;
	}
	if (list)
		ibv_free_device_list(list);
	return found;
}

struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct rocemu_import_device_req req = { .pid = (uint32_t)getpid() };
	struct rocemu_cmd_file_hdr hdr;
	struct rocemu_device *dev;
	struct ibv_context *ctx;

	if (!cmd_fd_read(cmd_fd, &hdr))
		return REAL(ibv_import_device)(cmd_fd);
	dev = device_of_index(hdr.dev_index);
	if (!dev) {
		errno = ENODEV;
		return NULL;
	}
	memcpy(req.token, hdr.token, sizeof(req.token));
	rocemu_mem_proof_fill(&req.mem, &req);
	ctx = context_open(dev, ROCEMU_OP_IMPORT_DEVICE, &req, cmd_fd);
	rocemu_mem_proof_done(&req.mem);
	return ctx;
}

int ibv_close_device(struct ibv_context *context)
{
	struct rocemu_context *rctx;

	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_close_device)(context);
	rctx = to_rctx(context);
	if (rocemu_ctx_is_mlx4(context))
		rocemu_mlx4_uar_unregister(rctx);
	/* Closing the connection makes the daemon destroy what is left. */
	rocemu_conn_close(&rctx->conn);
	munmap(rctx->page, rctx->page_size);
	close(rctx->kick_fd);
	close(context->async_fd);
	close(context->cmd_fd);
	rocemu_qp_table_free(rctx);
	pthread_mutex_destroy(&context->mutex);
	rocemu_log(ROCEMU_LOG_DEBUG, "%s closed", rctx->info.name);
	free(rctx);
	return 0;
}
