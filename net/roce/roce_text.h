/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Words for what packets carry, shared by logs, `rocemu trace` and `rocemu ladder`. */
#ifndef ROCEMU_NET_ROCE_TEXT_H
#define ROCEMU_NET_ROCE_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* An AETH syndrome in words: "ACK", "RNR NAK 0.01 ms", "NAK PSN sequence error". */
void rocemu_aeth_text(uint8_t syndrome, char *buf, size_t cap);

/* A CM MAD attribute (IBTA table 103): "REQ", "REP"...; "?" for others. */
const char *rocemu_cm_attr_name(uint16_t attr);

/* The attribute ID of a MAD whose header starts at mad (len bytes), 0 when too short. */
uint16_t rocemu_mad_attr(const uint8_t *mad, size_t len);

#endif /* ROCEMU_NET_ROCE_TEXT_H */
