/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "ctrl_client.h"

#include <sys/random.h>

int ctrl_client_call(int sock, enum rocemu_ctrl_op op, const void *body, int send_fd, void *resp,
		     int *fds, int *nfds)
{
	static uint32_t seq;
	static union {
		struct rocemu_msg_hdr hdr;
		char bytes[ROCEMU_CTRL_MSG_MAX];
	} msg;
	int got[ROCEMU_CTRL_MAX_FDS], ngot = ROCEMU_CTRL_MAX_FDS, err, i;
	struct rocemu_msg_hdr hdr;
	ssize_t n;

	rocemu_msg_init(&hdr, (uint16_t)op, ++seq, 0, rocemu_ctrl_body_size[op][0]);
	err = rocemu_ctrl_send(sock, &hdr, body, &send_fd, send_fd >= 0);
	if (err)
		return err;
	n = rocemu_ctrl_recv(sock, &msg, sizeof(msg), got, &ngot);
	err = n < 0 ? (int)n : rocemu_msg_check(&msg, (size_t)n, 1);
	if (!err && msg.hdr.seq != seq)
		err = -EPROTO;
	for (i = 0; i < ngot; i++) {
		if (!err && nfds && i < *nfds)
			fds[i] = got[i];
		else
			close(got[i]);
	}
	if (nfds)
		*nfds = err ? 0 : ngot < *nfds ? ngot : *nfds;
	if (err)
		return err;
	if (!msg.hdr.status && resp)
		memcpy(resp, msg.bytes + sizeof(msg.hdr), msg.hdr.len);
	return msg.hdr.status;
}

int ctrl_client_mem_proof(struct rocemu_mem_proof *proof, const void *req)
{
	ssize_t n;

	proof->self = (uintptr_t)req;
	proof->guard = 0;
	proof->uffd = -1;
	proof->guard_fd = -1;
	n = getrandom(proof->nonce, sizeof(proof->nonce), 0);
	return n == (ssize_t)sizeof(proof->nonce) ? 0 : n < 0 ? -errno : -EIO;
}
