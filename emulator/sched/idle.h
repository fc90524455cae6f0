/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The loop's idle hook, which decides when the daemon works and when it
 * sleeps, and learns of new work without a system call: before each poll
 * of the loop (due timers never put it off), scan the contexts whose
 * doorbell_seq changed (their QPs' doorbell records, their CQs' arm
 * words), spin ~2 us after work, then publish daemon_sleeping, rescan,
 * and only then sleep (no lost wake-up: the shim stores its doorbell,
 * fences, and kicks if it sees the flag).
 */
#ifndef ROCEMU_EMULATOR_IDLE_H
#define ROCEMU_EMULATOR_IDLE_H

struct rocemu_emu;
struct rocemu_client;

/* Install the scan as emu's loop idle hook, and wake-ups on received datagrams. */
void rocemu_idle_start(struct rocemu_emu *emu);
/* A client's kick eventfd fired (already drained). */
void rocemu_idle_kick(struct rocemu_client *c);
/*
 * c is about to be served a control request: the doorbells it rang
 * before sending it are seen first, as a NIC has seen a doorbell written
 * before the command that follows it. A WQE posted, then its QP moved to
 * ERR (rdma_disconnect right after a last SEND) goes out before the flush.
 */
void rocemu_idle_before_request(struct rocemu_client *c);
/* A new client's page: the sleeping flag set, recv_kick as it stands. */
void rocemu_idle_page_init(struct rocemu_emu *emu, struct rocemu_client *c);

#endif /* ROCEMU_EMULATOR_IDLE_H */
