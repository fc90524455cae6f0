/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* CRC-32 (carry-less multiply folding on x86-64: 512-bit VPCLMULQDQ where
 * the CPU has it, else PCLMULQDQ; slice-by-16 elsewhere and for tails)
 * and the RoCEv2 ICRC over the masked pseudo header. */
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "net/roce/icrc.h"
#include "net/roce/roce_opcode.h"

#define CRC32_POLY_REFLECTED 0xedb88320u

/* Slice-by-16: crc_table[0] is the byte-at-a-time table; crc_table[k][b]
 * is the CRC of byte b followed by k zero bytes, so 16 independent lookups
 * consume 16 bytes (16 KiB of tables, in L1). */
#define SLICES 16
static uint32_t crc_table[SLICES][256];

/* Set once before main(): constant, well-predicted branches per call. */
static bool crc_use_clmul, crc_use_wide;

/*
 * The IPv4 ID's share of an ICRC (icrc_id_share): x^(8 * 2^k) and
 * x^(-8 * 2^k) mod P, and which byte each crc_table[0] entry's top byte
 * comes from (those 256 top bytes are distinct), to undo two CRC steps.
 */
#define X_POW_BITS 17	/* lengths below 2^17 bytes: any UDP payload */
static uint32_t x_pow8[X_POW_BITS], x_pow8_inv[X_POW_BITS];
static uint8_t crc_top_byte_of[256];

static uint32_t gf2_mulmod(uint32_t a, uint32_t b);

__attribute__((constructor, cold)) static void crc_init(void)
{
	for (uint32_t b = 0; b < 256; b++) {
		uint32_t c = b;

		for (int bit = 0; bit < 8; bit++)
			c = (c >> 1) ^ (CRC32_POLY_REFLECTED & -(c & 1));
		crc_table[0][b] = c;
	}
	for (int k = 1; k < SLICES; k++)
		for (int b = 0; b < 256; b++) {
			uint32_t prev = crc_table[k - 1][b];

			crc_table[k][b] = (prev >> 8) ^ crc_table[0][prev & 0xff];
		}
	for (int b = 0; b < 256; b++)
		crc_top_byte_of[crc_table[0][b] >> 24] = (uint8_t)b;
	/* Reflected order: x^k is bit 31 - k. x^-1 = (P - 1) / x, as P(0) = 1. */
	x_pow8[0] = 1u << (31 - 8);
	x_pow8_inv[0] = ((1u << 31 ^ CRC32_POLY_REFLECTED) << 1) | 1;
	for (int k = 0; k < 3; k++)
		x_pow8_inv[0] = gf2_mulmod(x_pow8_inv[0], x_pow8_inv[0]);
	for (int k = 1; k < X_POW_BITS; k++) {
		x_pow8[k] = gf2_mulmod(x_pow8[k - 1], x_pow8[k - 1]);
		x_pow8_inv[k] = gf2_mulmod(x_pow8_inv[k - 1], x_pow8_inv[k - 1]);
	}
#if defined(__x86_64__)
	__builtin_cpu_init();	/* constructors may run before libgcc's */
	crc_use_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
	crc_use_wide = crc_use_clmul && __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("vpclmulqdq");
#endif
}

/* The register without the initial and final inversions. */
static uint32_t crc32_update_table(uint32_t crc, const uint8_t *p, size_t len)
{
	for (; len >= SLICES; len -= SLICES, p += SLICES) {
		uint64_t lo, hi;

		memcpy(&lo, p, sizeof(lo));
		memcpy(&hi, p + 8, sizeof(hi));
		lo = le64toh(lo) ^ crc;
		hi = le64toh(hi);
		crc = crc_table[15][lo & 0xff] ^ crc_table[14][(lo >> 8) & 0xff] ^
		      crc_table[13][(lo >> 16) & 0xff] ^ crc_table[12][(lo >> 24) & 0xff] ^
		      crc_table[11][(lo >> 32) & 0xff] ^ crc_table[10][(lo >> 40) & 0xff] ^
		      crc_table[9][(lo >> 48) & 0xff] ^ crc_table[8][lo >> 56] ^
		      crc_table[7][hi & 0xff] ^ crc_table[6][(hi >> 8) & 0xff] ^
		      crc_table[5][(hi >> 16) & 0xff] ^ crc_table[4][(hi >> 24) & 0xff] ^
		      crc_table[3][(hi >> 32) & 0xff] ^ crc_table[2][(hi >> 40) & 0xff] ^
		      crc_table[1][(hi >> 48) & 0xff] ^ crc_table[0][hi >> 56];
	}
	for (; len; len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
/*
 * Intel's "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ",
 * bit-reflected: constants are x^k mod P(x), reflected and shifted one bit
 * (as in Linux crc32-pclmul and zlib-ng). In a reflected register the low
 * qword holds the earlier (higher-degree) bits.
 */
#define CLMUL_MIN_BYTES 64
#define K_FOLD_512_LO 0x154442bd4ull	/* x^(4*128+32) mod P */
#define K_FOLD_512_HI 0x1c6e41596ull	/* x^(4*128-32) mod P */
#define K_FOLD_128_LO 0x1751997d0ull	/* x^(128+32) mod P */
#define K_FOLD_128_HI 0x0ccaa009eull	/* x^(128-32) mod P */
#define K_FOLD_64 0x163cd6124ull	/* x^64 mod P */
#define K_POLY 0x1db710641ull		/* P(x), reflected */
#define K_FOLD_2048_LO 0x11542778aull	/* x^(4*512+32) mod P: four 512-bit lanes */
#define K_FOLD_2048_HI 0x1322d1430ull	/* x^(4*512-32) mod P */
#define K_FOLD_384_LO 0x03db1ecdcull	/* x^(384+32) mod P: 128-bit lanes of one register */
#define K_FOLD_384_HI 0x174359406ull	/* x^(384-32) mod P */
#define K_FOLD_256_LO 0x0f1da05aaull	/* x^(256+32) mod P */
#define K_FOLD_256_HI 0x15a546366ull	/* x^(256-32) mod P */
#define WIDE_MIN_BYTES 256
#define K_BARRETT_MU 0x1f7011641ull	/* floor(x^64 / P(x)), reflected */

/* acc * x^(distance) mod P, plus next: one 128-bit fold step. */
__attribute__((target("pclmul,sse4.1"), always_inline)) static inline __m128i
clmul_fold(__m128i acc, __m128i k, __m128i next)
{
	__m128i lo = _mm_clmulepi64_si128(acc, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(acc, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

/* The same step on the four 128-bit lanes of a 512-bit register. */
__attribute__((target("avx512f,vpclmulqdq"), always_inline)) static inline __m512i
clmul_fold_wide(__m512i acc, __m512i k, __m512i next)
{
	__m512i lo = _mm512_clmulepi64_epi128(acc, k, 0x00);
	__m512i hi = _mm512_clmulepi64_epi128(acc, k, 0x11);

	return _mm512_ternarylogic_epi64(lo, hi, next, 0x96);	/* lo ^ hi ^ next */
}

/*
 * The first len - len % 64 bytes (len >= WIDE_MIN_BYTES) folded into 128
 * bits, 256 bytes a step in four 512-bit registers; *done says how many.
 */
__attribute__((target("avx512f,vpclmulqdq"))) static __m128i
crc32_fold_wide(uint32_t crc, const uint8_t *p, size_t len, size_t *done)
{
	const __m512i k2048 = _mm512_broadcast_i32x4(_mm_set_epi64x(K_FOLD_2048_HI, K_FOLD_2048_LO));
	const __m512i k512 = _mm512_broadcast_i32x4(_mm_set_epi64x(K_FOLD_512_HI, K_FOLD_512_LO));
	/* Lanes 0-2 travel 384, 256 and 128 bits to lane 3; lane 3 stays (its multipliers 0). */
	const __m512i klanes = _mm512_set_epi64(0, 0, K_FOLD_128_HI, K_FOLD_128_LO, K_FOLD_256_HI,
						K_FOLD_256_LO, K_FOLD_384_HI, K_FOLD_384_LO);
	const uint8_t *start = p;
	__m512i z0 = _mm512_xor_si512(_mm512_loadu_si512(p),
				      _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)crc)));
	__m512i z1 = _mm512_loadu_si512(p + 64);
	__m512i z2 = _mm512_loadu_si512(p + 128);
	__m512i z3 = _mm512_loadu_si512(p + 192);
	__m128i x;

	for (p += 256, len -= 256; len >= 256; p += 256, len -= 256) {
		z0 = clmul_fold_wide(z0, k2048, _mm512_loadu_si512(p));
		z1 = clmul_fold_wide(z1, k2048, _mm512_loadu_si512(p + 64));
		z2 = clmul_fold_wide(z2, k2048, _mm512_loadu_si512(p + 128));
		z3 = clmul_fold_wide(z3, k2048, _mm512_loadu_si512(p + 192));
	}
	z0 = clmul_fold_wide(z0, k512, z1);
	z0 = clmul_fold_wide(z0, k512, z2);
	z0 = clmul_fold_wide(z0, k512, z3);
	for (; len >= 64; p += 64, len -= 64)
		z0 = clmul_fold_wide(z0, k512, _mm512_loadu_si512(p));
	z0 = clmul_fold_wide(z0, klanes, _mm512_maskz_mov_epi64(0xc0, z0));
	x = _mm_xor_si128(_mm_xor_si128(_mm512_extracti32x4_epi32(z0, 0),
					_mm512_extracti32x4_epi32(z0, 1)),
			  _mm_xor_si128(_mm512_extracti32x4_epi32(z0, 2),
					_mm512_extracti32x4_epi32(z0, 3)));
	*done = (size_t)(p - start);
	return x;
}

/* The register after len bytes, len >= CLMUL_MIN_BYTES and a multiple of 16. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t
crc32_update_clmul(uint32_t crc, const uint8_t *p, size_t len)
{
	const __m128i k512 = _mm_set_epi64x(K_FOLD_512_HI, K_FOLD_512_LO);
	const __m128i k128 = _mm_set_epi64x(K_FOLD_128_HI, K_FOLD_128_LO);
	const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i x0, x1, x2, x3, t;
	size_t done;

	if (crc_use_wide && len >= WIDE_MIN_BYTES) {
		x0 = crc32_fold_wide(crc, p, len, &done);
		p += done;
		len -= done;
	} else {
		x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)crc));
		x1 = _mm_loadu_si128((const __m128i *)(p + 16));
		x2 = _mm_loadu_si128((const __m128i *)(p + 32));
		x3 = _mm_loadu_si128((const __m128i *)(p + 48));
		/* Four independent lanes hide the multiplier's latency. */
		for (p += 64, len -= 64; len >= 64; p += 64, len -= 64) {
			x0 = clmul_fold(x0, k512, _mm_loadu_si128((const __m128i *)p));
			x1 = clmul_fold(x1, k512, _mm_loadu_si128((const __m128i *)(p + 16)));
			x2 = clmul_fold(x2, k512, _mm_loadu_si128((const __m128i *)(p + 32)));
			x3 = clmul_fold(x3, k512, _mm_loadu_si128((const __m128i *)(p + 48)));
		}
		x0 = clmul_fold(x0, k128, x1);
		x0 = clmul_fold(x0, k128, x2);
		x0 = clmul_fold(x0, k128, x3);
	}
	for (; len >= 16; p += 16, len -= 16)
		x0 = clmul_fold(x0, k128, _mm_loadu_si128((const __m128i *)p));

	/* 128 -> 96 bits (appending the 32 zero bits of the CRC) -> 64 bits. */
	t = _mm_clmulepi64_si128(x0, k128, 0x10);
	x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), t);
	t = _mm_clmulepi64_si128(_mm_and_si128(x0, low32), _mm_cvtsi64_si128(K_FOLD_64), 0x00);
	x0 = _mm_xor_si128(_mm_srli_si128(x0, 4), t);

	/* Barrett reduction 64 -> 32 bits. */
	t = _mm_clmulepi64_si128(_mm_and_si128(x0, low32), _mm_cvtsi64_si128(K_BARRETT_MU), 0x00);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), _mm_cvtsi64_si128(K_POLY), 0x00);
	return (uint32_t)_mm_extract_epi32(_mm_xor_si128(x0, t), 1);
}
#endif

static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t len)
{
#if defined(__x86_64__)
	if (crc_use_clmul && len >= CLMUL_MIN_BYTES) {
		size_t blocks = len & ~(size_t)15;

		crc = crc32_update_clmul(crc, p, blocks);
		p += blocks;
		len -= blocks;
	}
#endif
	return crc32_update_table(crc, p, len);
}

uint32_t rocemu_crc32(uint32_t crc, const void *buf, size_t len)
{
	return ~crc32_update(~crc, buf, len);
}

uint32_t rocemu_crc32_table(uint32_t crc, const void *buf, size_t len)
{
	return ~crc32_update_table(~crc, buf, len);
}

/*
 * a * b mod P in the register's reflected order (x^0 is bit 31): appending
 * n zero bytes to a message multiplies its raw register by x^(8n).
 */
static uint32_t gf2_mulmod(uint32_t a, uint32_t b)
{
	uint32_t p = 0;

	for (uint32_t m = 1u << 31; m; m >>= 1) {
		if (a & m)
			p ^= b;
		b = b & 1 ? (b >> 1) ^ CRC32_POLY_REFLECTED : b >> 1;
	}
	return p;
}

/* x^(8n) mod P from a table of x^(8 * 2^k) (x_pow8 or, for x^(-8n), x_pow8_inv). */
static uint32_t x_pow8n(uint32_t n, const uint32_t *table)
{
	uint32_t r = 1u << 31;

	for (int k = 0; n && k < X_POW_BITS; k++, n >>= 1)
		if (n & 1)
			r = gf2_mulmod(r, table[k]);
	return r;
}

/*
 * x^(-8n) mod P for the few lengths a receiver sees again and again (full
 * MTU data, ACKs): a received packet of another peer's ID costs one
 * multiplication, not X_POW_BITS. Written by whoever misses; a torn entry
 * cannot match, as each entry is one 64-bit word.
 */
#define INV_CACHE_SLOTS 64
static _Atomic uint64_t x_pow8n_inv_cache[INV_CACHE_SLOTS];

static uint32_t x_pow8n_inv_cached(uint32_t n)
{
	_Atomic uint64_t *slot = &x_pow8n_inv_cache[(n ^ n >> 6) % INV_CACHE_SLOTS];
	uint64_t entry = atomic_load_explicit(slot, memory_order_relaxed);
	uint32_t pow;

	if (entry && (uint32_t)(entry >> 32) == n)
		return (uint32_t)entry;
	pow = x_pow8n(n, x_pow8_inv);
	atomic_store_explicit(slot, (uint64_t)n << 32 | pow, memory_order_relaxed);
	return pow;
}

/* What the ICRC covers before the BTH's extension headers, masked. */
struct icrc_pseudo_v4 {
	uint8_t lrh[8];			/* the absent IB LRH: all 1s */
	struct iphdr ip;
	struct udphdr udp;
	uint8_t bth[ROCEMU_BTH_BYTES];
} __attribute__((packed));

_Static_assert(sizeof(struct icrc_pseudo_v4) == 48, "pseudo header layout");

#define BTH_FECN_BECN_BYTE 4	/* F, B and 6 reserved bits: masked */
/* Bytes the ICRC covers after the IPv4 ID, for a packet of len bytes (BTH to pad). */
#define BYTES_AFTER_ID(len) \
	(sizeof(struct icrc_pseudo_v4) - offsetof(struct icrc_pseudo_v4, ip.id) - 2 + \
	 (len) - ROCEMU_BTH_BYTES)

/*
 * ICRC(ID id) ^ ICRC(ID 0) for a packet of len bytes: the raw CRC of the
 * two ID bytes moved over the bytes after them (the CRC is affine).
 */
static uint32_t icrc_id_share(uint16_t id, size_t len)
{
	uint32_t reg = crc_table[0][id >> 8];

	reg = (reg >> 8) ^ crc_table[0][(reg ^ id) & 0xff];
	return gf2_mulmod(reg, x_pow8n((uint32_t)BYTES_AFTER_ID(len), x_pow8));
}

/*
 * The ID whose share is share (icrc_id_share), if one is: the two CRC
 * steps of the ID bytes undone through the distinct top bytes of
 * crc_table[0]. Returns 0 with *id set, or -EBADMSG when no ID gives share.
 */
static int icrc_id_of_share(uint32_t share, size_t len, uint16_t *id)
{
	uint32_t reg = gf2_mulmod(share, x_pow8n_inv_cached((uint32_t)BYTES_AFTER_ID(len)));
	uint8_t idx = crc_top_byte_of[reg >> 24], first;
	uint32_t before = reg ^ crc_table[0][idx];	/* the register after the first byte, >> 8 */

	first = crc_top_byte_of[(before >> 16) & 0xff];
	if (crc_table[0][first] >> 8 != before)
		return -EBADMSG;
	*id = (uint16_t)(first << 8 | (idx ^ (crc_table[0][first] & 0xff)));
	return 0;
}

uint32_t rocemu_icrc_v4_hdrs(const struct iphdr *ip, const struct udphdr *udp,
			     const uint8_t *pkt, size_t len)
{
	struct icrc_pseudo_v4 ph;
	uint32_t crc;

	memset(ph.lrh, 0xff, sizeof(ph.lrh));
	ph.ip = *ip;
	ph.ip.tos = 0xff;
	ph.ip.ttl = 0xff;
	ph.ip.check = 0xffff;
	ph.udp = *udp;
	ph.udp.check = 0xffff;
	memcpy(ph.bth, pkt, ROCEMU_BTH_BYTES);
	ph.bth[BTH_FECN_BECN_BYTE] = 0xff;

	crc = crc32_update(~0u, (const uint8_t *)&ph, sizeof(ph));
	crc = crc32_update(crc, pkt + ROCEMU_BTH_BYTES, len - ROCEMU_BTH_BYTES);
	return ~crc;
}

/* The ICRC at the end of pkt[0, len + 4), as the wire carries it. */
static uint32_t icrc_of(const uint8_t *pkt, size_t len)
{
	uint32_t wire;

	memcpy(&wire, pkt + len, sizeof(wire));
	return le32toh(wire);
}

int rocemu_icrc_check_v4_hdrs(const struct iphdr *ip, const struct udphdr *udp,
			      const uint8_t *pkt, size_t len)
{
	if (len < ROCEMU_BTH_BYTES + ROCEMU_ICRC_BYTES)
		return -EINVAL;
	len -= ROCEMU_ICRC_BYTES;
	return icrc_of(pkt, len) == rocemu_icrc_v4_hdrs(ip, udp, pkt, len) ? 0 : -EBADMSG;
}

/* The ICRC under the IPv4 header of flow with ID id and, or not, DF. */
static uint32_t icrc_v4(const struct rocemu_ipv4_udp *flow, uint16_t id, bool df,
			const uint8_t *pkt, size_t len)
{
	uint16_t udp_len = (uint16_t)(sizeof(struct udphdr) + len + ROCEMU_ICRC_BYTES);
	const struct iphdr ip = {
		.version = 4,
		.ihl = sizeof(struct iphdr) / 4,
		.tot_len = htons((uint16_t)(sizeof(struct iphdr) + udp_len)),
		.id = htons(id),
		.frag_off = df ? htons(IP_DF) : 0,
		.protocol = IPPROTO_UDP,
		.saddr = flow->saddr,
		.daddr = flow->daddr,
	};
	const struct udphdr udp = {
		.source = flow->sport,
		.dest = flow->dport,
		.len = htons(udp_len),
	};

	return rocemu_icrc_v4_hdrs(&ip, &udp, pkt, len);
}

uint32_t rocemu_icrc_v4(const struct rocemu_ipv4_udp *flow, const uint8_t *pkt, size_t len)
{
	return icrc_v4(flow, 0, true, pkt, len);
}

size_t rocemu_icrc_append_v4(const struct rocemu_ipv4_udp *flow, uint8_t *pkt, size_t len,
			     uint16_t ip_id)
{
	uint32_t icrc = htole32(icrc_v4(flow, ip_id, true, pkt, len));

	memcpy(pkt + len, &icrc, sizeof(icrc));
	return len + ROCEMU_ICRC_BYTES;
}

void rocemu_icrc_move_id(uint8_t *pkt, size_t len, uint16_t from, uint16_t to)
{
	uint32_t icrc;

	if (len < ROCEMU_BTH_BYTES + ROCEMU_ICRC_BYTES || from == to)
		return;
	len -= ROCEMU_ICRC_BYTES;
	memcpy(&icrc, pkt + len, sizeof(icrc));
	icrc = htole32(le32toh(icrc) ^ icrc_id_share(from ^ to, len));
	memcpy(pkt + len, &icrc, sizeof(icrc));
}

int rocemu_icrc_check_v4(const struct rocemu_ipv4_udp *flow, const uint8_t *pkt, size_t len,
			 struct rocemu_ipv4_fields *ip)
{
	uint32_t wire, share;
	uint16_t id;

	if (len < ROCEMU_BTH_BYTES + ROCEMU_ICRC_BYTES)
		return -EINVAL;
	len -= ROCEMU_ICRC_BYTES;
	wire = icrc_of(pkt, len);
	/* With DF, as RoCEv2 senders set it; then without, as a sender may leave it off. */
	for (int df = 1; df >= 0; df--) {
		share = wire ^ icrc_v4(flow, 0, df, pkt, len);
		if (share && icrc_id_of_share(share, len, &id))
			continue;
		if (ip) {
			ip->id = share ? id : 0;
			ip->df = df;
		}
		return 0;
	}
	return -EBADMSG;
}
