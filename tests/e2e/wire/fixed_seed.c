/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Preloaded into ibv_rc_pingpong so that two runs draw the same PSNs: it
 * seeds lrand48 from its pid and the time, and a capture holds the PSNs.
 */
#include <stdlib.h>

void srand48(long seed)
{
	unsigned short state[3] = { 0x330e, 0x1234, 0x5678 };

	(void)seed;
	seed48(state);
}
