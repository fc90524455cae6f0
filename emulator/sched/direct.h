/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Doorbells of programs that drive the rings themselves: a QP or CQ handed
 * out by mlx5dv_init_obj rings its doorbell record and BlueFlame without
 * telling the daemon (no doorbell_seq, no kick). While such objects exist,
 * the doorbell scan compares their doorbell words with what it last saw,
 * and a sleeping daemon wakes on a poll timer that backs off from
 * ROCEMU_DIRECT_POLL_MIN_NS to ROCEMU_DIRECT_POLL_MAX_NS while nothing
 * rings, once ROCEMU_DIRECT_HOT_NS passed without work: a program that
 * just received or sent is likely to ring again soon (a reply, the next
 * post). An object that came with the program's userfaultfd is not polled
 * once cold: its doorbell pages are write-protected, and the program's
 * next doorbell faults and wakes the loop (the protection lifted, hot
 * again). With none, nothing changes: the daemon sleeps without a timer,
 * and the scan does not call in here (it asks direct_objs first).
 */
#ifndef ROCEMU_EMULATOR_DIRECT_H
#define ROCEMU_EMULATOR_DIRECT_H

#include <stdbool.h>

#include "emulator/core/client.h"
#include "rocemu/ctrl.h"

#define ROCEMU_DIRECT_POLL_MIN_NS 16000u
#define ROCEMU_DIRECT_POLL_MAX_NS 1000000u
/* After any work (a doorbell, a packet, a kick) the period stays the shortest this long. */
#define ROCEMU_DIRECT_HOT_NS 2000000u
/* The most a program may ask protected per object: a QP's doorbell record and register pages. */
#define ROCEMU_DIRECT_WP_MAX (4u * 4096u)

/* DIRECT_DOORBELLS: watch c's QP or CQ. Returns 0 (also when already watched) or -EINVAL. */
int rocemu_direct_watch(struct rocemu_client *c, const struct rocemu_direct_doorbells_req *req);
/* Whether a doorbell word of c's watched objects changed since the last call; c has some. */
bool rocemu_direct_rung(struct rocemu_client *c);
/* The daemon found work, and something is watched: poll soon again. */
void rocemu_direct_work(struct rocemu_emu *emu);
/*
 * Cold (no work for ROCEMU_DIRECT_HOT_NS): write-protect the doorbell pages
 * of every watched object with a userfaultfd. Called before the scan that
 * precedes sleep, so a doorbell rung before the protection is still seen.
 */
void rocemu_direct_cool(struct rocemu_emu *emu);
/* The daemon goes to sleep: the poll timer, while a watched object is not protected. */
void rocemu_direct_sleep(struct rocemu_emu *emu);

#endif /* ROCEMU_EMULATOR_DIRECT_H */
