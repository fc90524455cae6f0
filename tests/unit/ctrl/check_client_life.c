/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A client's life (emulator/ctrl/client_life.c) beside the fixture's: the
 * name of its process, OPEN_DEVICE's descriptors and context page, its
 * refusals (ENODEV, EBUSY), IMPORT_DEVICE by the cmd_fd's token onto the
 * same objects, and what freeing a client gives back: its pipe closed,
 * its charge returned, its kick heard by nobody, its ufile's objects kept
 * while the cmd_fd lives.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emulator/ctrl/client_life.h"
#include "emulator/ctrl/status.h"
#include "emulator/mem/pd.h"
#include "emulator/mem/ufile.h"
#include "tests/unit/fixture.h"

/* A client of process pid whose connection's other end is closed at once. */
static struct rocemu_client *client_of(pid_t pid)
{
	struct rocemu_client *c;
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	c = rocemu_client_new(&fx.emu, sv[0], pid, getuid());
	ck_assert_ptr_nonnull(c);
	close(sv[1]);
	return c;
}

/* The proof of this process's memory the shim sends, nonce unique to c. */
static struct rocemu_mem_proof proof_for(const void *req, const struct rocemu_client *c)
{
	struct rocemu_mem_proof mem = { .self = (uintptr_t)req, .uffd = -1, .guard_fd = -1 };

	memcpy(mem.nonce, &c, sizeof(c));
	return mem;
}

static int open_device(struct rocemu_client *c, uint32_t dev_index,
		       struct rocemu_open_device_resp *resp, int fds[4], int *nfds)
{
	struct rocemu_open_device_req req = { .dev_index = dev_index, .pid = (uint32_t)getpid() };

	req.mem = proof_for(&req, c);
	*nfds = 0;
	return rocemu_client_open_device(c, dev_index, &req, sizeof(req), &req.mem, resp, fds, nfds);
}

static int import_device(struct rocemu_client *c, const uint8_t *token,
			 struct rocemu_open_device_resp *resp, int fds[4], int *nfds)
{
	struct rocemu_import_device_req req = { .pid = (uint32_t)getpid() };

	memcpy(req.token, token, sizeof(req.token));
	req.mem = proof_for(&req, c);
	*nfds = 0;
	return rocemu_client_import_device(c, req.token, &req, sizeof(req), &req.mem, resp, fds,
					   nfds);
}

static void close_fds(const int *fds, int nfds)
{
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
}

/* The cmd_fd's header, as an importer reads it without taking it. */
static struct rocemu_cmd_file_hdr cmd_file(int cmd_fd)
{
	struct rocemu_cmd_file_hdr hdr;

	ck_assert_int_eq(recv(cmd_fd, &hdr, sizeof(hdr), MSG_PEEK | MSG_DONTWAIT),
			 (ssize_t)sizeof(hdr));
	ck_assert_uint_eq(hdr.magic, ROCEMU_CMD_FILE_MAGIC);
	return hdr;
}

/* This process's line of the status report (its account). */
static void process_line(char *line, size_t len)
{
	static char text[64 * 1024];
	char head[64];
	const char *p, *end;

	ck_assert_int_gt(rocemu_status_text(&fx.emu, text, sizeof(text)), 0);
	snprintf(head, sizeof(head), "process pid %d ", (int)getpid());
	p = strstr(text, head);
	ck_assert_ptr_nonnull(p);
	end = strchr(p, '\n');
	snprintf(line, len, "%.*s", (int)(end - p), p);
}

START_TEST(test_open_device)
{
	struct rocemu_client *c = client_of(getpid());
	struct rocemu_open_device_resp resp;
	struct rocemu_context_page *page;
	struct stat st;
	int fds[4], nfds;

	ck_assert_str_eq(c->comm, "check_client_li");	/* the kernel's 15 characters */
	ck_assert_ptr_null(c->dev);
	ck_assert_int_eq(open_device(c, 0, &resp, fds, &nfds), 0);
	ck_assert_int_eq(nfds, 4);
	ck_assert_ptr_eq(c->dev, fx.dev);
	ck_assert_str_eq(resp.dev.name, "rocemu0");
	ck_assert_uint_eq(resp.dev.ipv4, fx.dev->ipv4);
	/* The async events' read end, the kick eventfd, the context page, the cmd_fd. */
	ck_assert_int_eq(fstat(fds[0], &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	ck_assert_int_eq(eventfd_write(fds[1], 1), 0);
	ck_assert_int_eq(fstat(fds[2], &st), 0);
	ck_assert_uint_ge(resp.context_page_size, sizeof(*page));
	ck_assert_int_ge(st.st_size, resp.context_page_size);
	page = mmap(NULL, resp.context_page_size, PROT_READ, MAP_SHARED, fds[2], 0);
	ck_assert_ptr_ne(page, MAP_FAILED);
	/* A new context's shim kicks until the daemon says it is awake; no QP is in ERR. */
	ck_assert_uint_eq(page->daemon_sleeping, 1);
	ck_assert_uint_eq(page->recv_kick, 0);
	ck_assert_uint_eq(cmd_file(fds[3]).dev_index, 0);
	munmap(page, resp.context_page_size);
	close_fds(fds, nfds);
}
END_TEST

START_TEST(test_open_refused)
{
	struct rocemu_client *c = client_of(getpid());
	struct rocemu_open_device_resp resp;
	int fds[4], nfds;

	ck_assert_int_eq(open_device(c, 1, &resp, fds, &nfds), -ENODEV);
	ck_assert_int_eq(nfds, 0);
	ck_assert_ptr_null(c->dev);
	ck_assert_int_eq(open_device(c, 0, &resp, fds, &nfds), 0);
	close_fds(fds, nfds);
	/* One context per connection. */
	ck_assert_int_eq(open_device(c, 0, &resp, fds, &nfds), -EBUSY);
	ck_assert_int_eq(nfds, 0);
	ck_assert_int_eq(open_device(fx.client, 0, &resp, fds, &nfds), -EBUSY);
}
END_TEST

START_TEST(test_import_device)
{
	struct rocemu_client *owner = client_of(getpid()), *importer = client_of(getpid());
	struct rocemu_open_device_resp resp;
	uint8_t wrong[ROCEMU_CMD_TOKEN_LEN] = { 0 };
	struct rocemu_cmd_file_hdr hdr;
	int fds[4], nfds, ifds[4], infds;
	uint32_t pdn;

	ck_assert_int_eq(open_device(owner, 0, &resp, fds, &nfds), 0);
	hdr = cmd_file(fds[3]);
	ck_assert_int_eq(import_device(importer, wrong, &resp, ifds, &infds), -EINVAL);
	ck_assert_ptr_null(importer->dev);
	ck_assert_int_eq(import_device(importer, hdr.token, &resp, ifds, &infds), 0);
	/* The importer has the cmd_fd already: three descriptors. */
	ck_assert_int_eq(infds, 3);
	ck_assert_ptr_eq(importer->dev, fx.dev);
	ck_assert_ptr_eq(importer->ufile, owner->ufile);
	ck_assert_uint_eq(owner->ufile->contexts, 2);
	/* A PD of the shared ufile is the importer's to import; one of another ufile is unknown. */
	ck_assert_int_eq(rocemu_pd_alloc(owner, &pdn), 0);
	ck_assert_int_eq(rocemu_pd_import(importer, pdn), 0);
	ck_assert_int_eq(rocemu_pd_import(importer, fx.pdn), -ENOENT);
	close_fds(ifds, infds);
	ck_assert_int_eq(import_device(importer, hdr.token, &resp, ifds, &infds), -EBUSY);
	ck_assert_int_eq(infds, 0);
	close_fds(fds, nfds);
}
END_TEST

START_TEST(test_free_gives_back)
{
	struct rocemu_client *c;
	struct rocemu_open_device_resp resp;
	char before[320], after[320];
	struct rocemu_cmd_file_hdr hdr;
	int fds[4], nfds, ifds[4], infds;
	uint32_t pdn;
	char byte;

	process_line(before, sizeof(before));
	c = client_of(getpid());
	ck_assert_int_eq(open_device(c, 0, &resp, fds, &nfds), 0);
	ck_assert_int_eq(rocemu_pd_alloc(c, &pdn), 0);
	process_line(after, sizeof(after));
	ck_assert_str_ne(before, after);
	hdr = cmd_file(fds[3]);
	rocemu_client_free(c);
	/* Its async pipe is closed: the shim reads the end of file. */
	ck_assert_int_eq(read(fds[0], &byte, 1), 0);
	/* A kick now reaches nobody: the loop no longer watches the eventfd. */
	ck_assert_int_eq(eventfd_write(fds[1], 1), 0);
	fx_turn();
	/* While the cmd_fd lives, its ufile's PD does too: a new context imports it. */
	c = client_of(getpid());
	ck_assert_int_eq(import_device(c, hdr.token, &resp, ifds, &infds), 0);
	ck_assert_int_eq(rocemu_pd_import(c, pdn), 0);
	rocemu_client_free(c);
	close_fds(ifds, infds);
	close_fds(fds, nfds);
	/* The connections, contexts and objects all gone, the process holds what it held before. */
	fx_turn();
	process_line(after, sizeof(after));
	ck_assert_str_eq(before, after);
}
END_TEST

/* A process gone before its connection was served: its name is unknown, not stale. */
START_TEST(test_comm_of_gone_process)
{
	struct rocemu_client *c;
	pid_t child = fork();

	ck_assert_int_ge(child, 0);
	if (!child)
		_exit(0);
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	c = client_of(child);
	ck_assert_str_eq(c->comm, "?");
	ck_assert_int_eq(c->pid, child);
	rocemu_client_free(c);
}
END_TEST

static Suite *client_life_suite(void)
{
	Suite *s = suite_create("client_life");
	TCase *tc = tcase_create("client");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_open_device);
	tcase_add_test(tc, test_open_refused);
	tcase_add_test(tc, test_import_device);
	tcase_add_test(tc, test_free_gives_back);
	tcase_add_test(tc, test_comm_of_gone_process);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(client_life_suite());
}
