/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifndef ROCEMU_TOOLS_TRACE_CMD_H
#define ROCEMU_TOOLS_TRACE_CMD_H

/* `rocemu trace [DEV] [--qp QPN] [--kind packet,qp,cqe,async]`; the exit status. */
int trace_command(int argc, char **argv);

#endif /* ROCEMU_TOOLS_TRACE_CMD_H */
