/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The control protocol spoken by a test program itself, as a client
 * without the shim (a hostile one) may: one request and its answer, and
 * the proof of its address space that OPEN_DEVICE carries.
 */
#ifndef ROCEMU_TESTS_E2E_CTRL_CLIENT_H
#define ROCEMU_TESTS_E2E_CTRL_CLIENT_H

#include "rocemu/ctrl_io.h"

/*
 * Request op with body on sock, sending send_fd with it (-1: none).
 * Returns the daemon's status (0 or -errno), or a -errno of the exchange;
 * on 0 the answer's body is in resp (if not NULL) and up to *nfds fds it
 * carried are in fds (nfds NULL: they are closed), *nfds their count.
 */
int ctrl_client_call(int sock, enum rocemu_ctrl_op op, const void *body, int send_fd, void *resp,
		     int *fds, int *nfds);
/* The proof of req, an OPEN_DEVICE request here: its own address, a random nonce, no userfaultfd. */
int ctrl_client_mem_proof(struct rocemu_mem_proof *proof, const void *req);

#endif /* ROCEMU_TESTS_E2E_CTRL_CLIENT_H */
