/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Egress fault injector (see fault.h): configuration text, PRNG, decisions, and the
 * queue that carries out delays and reorders through loop timers. */
#include <ctype.h>
#include <errno.h>
#include <math.h>	/* isfinite */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/observe/fault.h"
#include "net/roce/roce_opcode.h"
#include "rocemu/log.h"

#define MAX_UDP_PAYLOAD 65507u	/* over IPv4: 65535 - 20 - 8 */

/* ---- configuration text ---- */

enum key_kind { KEY_RATE, KEY_DELAY_US, KEY_SEED };

static const struct {
	const char *name;
	enum key_kind kind;
	size_t offset;
} fault_keys[] = {
	{ "drop", KEY_RATE, offsetof(struct rocemu_fault_config, drop) },
	{ "dup", KEY_RATE, offsetof(struct rocemu_fault_config, dup) },
	{ "reorder", KEY_RATE, offsetof(struct rocemu_fault_config, reorder) },
	{ "corrupt", KEY_RATE, offsetof(struct rocemu_fault_config, corrupt) },
	{ "delay_us", KEY_DELAY_US, offsetof(struct rocemu_fault_config, delay_us) },
	{ "seed", KEY_SEED, offsetof(struct rocemu_fault_config, seed) },
};
#define NKEYS (sizeof(fault_keys) / sizeof(fault_keys[0]))

/* Rounding slack when rates are added, e.g. 0.7 + 0.2 + 0.1. */
#define RATE_SUM_SLACK 1e-9

__attribute__((format(printf, 3, 4)))
static int parse_error(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;

	if (errsize) {
		va_start(ap, fmt);
		vsnprintf(err, errsize, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Unsigned integer: decimal, or hex after 0x; no sign, no spaces. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	int base = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;
	const char *digits = base == 16 ? s + 2 : s;
	unsigned long long v;
	char *end;

	if (!(base == 16 ? isxdigit((unsigned char)*digits) : isdigit((unsigned char)*digits)))
		return -EINVAL;
	errno = 0;
	v = strtoull(digits, &end, base);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Rate: a plain decimal number from 0 to 1 (no sign, no nan/inf). */
static int parse_rate(const char *s, double *out)
{
	double v;
	char *end;

	if (!isdigit((unsigned char)s[0]) && s[0] != '.')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < 0 || v > 1)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_value(struct rocemu_fault_config *cfg, size_t key, const char *value)
{
	void *field = (char *)cfg + fault_keys[key].offset;
	uint64_t u;
	int rc;

	switch (fault_keys[key].kind) {
	case KEY_RATE:
		return parse_rate(value, field);
	case KEY_DELAY_US:
		rc = parse_u64(value, ROCEMU_FAULT_DELAY_US_MAX, &u);
		if (!rc)
			*(uint32_t *)field = (uint32_t)u;
		return rc;
	case KEY_SEED:
		return parse_u64(value, UINT64_MAX, field);
	}
	return -EINVAL;
}

static const char *const value_rules[] = {
	[KEY_RATE] = "a rate from 0 to 1",
	[KEY_DELAY_US] = "microseconds from 0 to 10000000",
	[KEY_SEED] = "an unsigned 64-bit integer",
};

/* Parse one key=value item, [item, end), into next; seen tracks keys already given. */
static int parse_item(const char *item, const char *end, struct rocemu_fault_config *next,
		      unsigned int *seen, char *err, size_t errsize)
{
	const char *eq = memchr(item, '=', (size_t)(end - item));
	size_t keylen, vallen, key;
	char value[64];

	if (!eq)
		return parse_error(err, errsize, "fault item '%.*s' is not key=value",
				   (int)(end - item), item);
	keylen = (size_t)(eq - item);
	vallen = (size_t)(end - eq - 1);
	for (key = 0; key < NKEYS; key++)
		if (strlen(fault_keys[key].name) == keylen &&
		    !memcmp(fault_keys[key].name, item, keylen))
			break;
	if (key == NKEYS)
		return parse_error(err, errsize,
				   "unknown fault key '%.*s' (known: drop, dup, reorder, corrupt, delay_us, seed)",
				   (int)keylen, item);
	if (*seen & (1u << key))
		return parse_error(err, errsize, "fault key '%s' given twice", fault_keys[key].name);
	*seen |= 1u << key;
	if (vallen < sizeof(value)) {
		memcpy(value, eq + 1, vallen);
		value[vallen] = '\0';
		if (!parse_value(next, key, value))
			return 0;
	}
	return parse_error(err, errsize, "bad value '%.*s' for fault key '%s': %s", (int)vallen,
			   eq + 1, fault_keys[key].name, value_rules[fault_keys[key].kind]);
}

int rocemu_fault_config_parse(const char *text, struct rocemu_fault_config *cfg, char *err,
			      size_t errsize)
{
	struct rocemu_fault_config next = { 0 };
	unsigned int seen = 0;
	const char *item, *end;
	int rc;

	if (!text || !cfg)
		return parse_error(err, errsize, "no fault text");
	for (item = text; *text; item = end + 1) {
		end = strchrnul(item, ',');
		rc = parse_item(item, end, &next, &seen, err, errsize);
		if (rc)
			return rc;
		if (!*end)
			break;
	}
	if (next.drop + next.dup + next.reorder + next.corrupt > 1 + RATE_SUM_SLACK)
		return parse_error(err, errsize,
				   "fault rates drop+dup+reorder+corrupt add up to more than 1");
	*cfg = next;
	return 0;
}

/* The shortest %g form that parses back to v. */
static int format_rate(char *buf, size_t size, double v)
{
	int n = 0;

	for (int prec = 1; prec <= 17; prec++) {
		n = snprintf(buf, size, "%.*g", prec, v);
		if (n < 0 || (size_t)n >= size || strtod(buf, NULL) == v)
			break;
	}
	return n;
}

int rocemu_fault_config_format(const struct rocemu_fault_config *cfg, char *buf, size_t size)
{
	size_t len = 0;

	if (!cfg || !buf || !size)
		return -EINVAL;
	buf[0] = '\0';
	for (size_t key = 0; key < NKEYS; key++) {
		const void *field = (const char *)cfg + fault_keys[key].offset;
		char value[32];
		int n;

		switch (fault_keys[key].kind) {
		case KEY_RATE:
			if (*(const double *)field == 0)
				continue;
			format_rate(value, sizeof(value), *(const double *)field);
			break;
		case KEY_DELAY_US:
			if (!*(const uint32_t *)field)
				continue;
			snprintf(value, sizeof(value), "%u", *(const uint32_t *)field);
			break;
		case KEY_SEED:
			if (!*(const uint64_t *)field)
				continue;
			snprintf(value, sizeof(value), "%llu",
				 (unsigned long long)*(const uint64_t *)field);
			break;
		}
		n = snprintf(buf + len, size - len, "%s%s=%s", len ? "," : "",
			     fault_keys[key].name, value);
		if (n < 0 || (size_t)n >= size - len) {
			buf[0] = '\0';
			return -ENOSPC;
		}
		len += (size_t)n;
	}
	return (int)len;
}

bool rocemu_fault_config_active(const struct rocemu_fault_config *cfg)
{
	return cfg->drop > 0 || cfg->dup > 0 || cfg->reorder > 0 || cfg->corrupt > 0 ||
	       cfg->delay_us > 0;
}

/* ---- PRNG: xoshiro256** seeded through splitmix64 (Blackman & Vigna) ---- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t xoshiro_next(uint64_t s[4])
{
	uint64_t result = rotl64(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl64(s[3], 45);
	return result;
}

/* ---- the injector ---- */

/* A datagram waiting for its due time or for a successor (REORDER). */
struct pending {
	struct pending *next;
	uint64_t due_ns;
	int fd;
	struct sockaddr_in dst;
	size_t len;
	uint8_t data[];
};

#define UNIFORM_BITS 53	/* draws compared as integers in [0, 2^53): rate 1 always hits */

/* Faults in the order their rate intervals are laid out on [0, 1). */
static const enum rocemu_fault_action cut_action[] = {
	ROCEMU_FAULT_DROP, ROCEMU_FAULT_DUPLICATE, ROCEMU_FAULT_REORDER, ROCEMU_FAULT_CORRUPT,
};
#define NCUTS (sizeof(cut_action) / sizeof(cut_action[0]))

struct rocemu_fault {
	struct rocemu_loop *loop;
	struct rocemu_fault_config cfg;
	bool active;
	uint64_t rng[4];
	uint64_t cut[NCUTS];		/* a draw below cut[i] (and not below cut[i-1]) gets cut_action[i] */
	struct pending *head;		/* delayed datagrams, due times nondecreasing */
	struct pending **tail;
	unsigned int queued;
	uint64_t queue_timer;		/* armed for head->due_ns while head is set */
	struct pending *held;		/* REORDER: waits for the next datagram sent */
	uint64_t hold_timer;
	struct rocemu_fault_counters counters;
};

struct rocemu_fault *rocemu_fault_new(struct rocemu_loop *loop,
				      const struct rocemu_fault_config *cfg, uint64_t salt)
{
	double rates[NCUTS], sum = 0;
	struct rocemu_fault *f;
	uint64_t x;

	if (!loop || !cfg) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->loop = loop;
	f->cfg = *cfg;
	f->active = rocemu_fault_config_active(cfg);
	f->tail = &f->head;
	rates[0] = cfg->drop;
	rates[1] = cfg->dup;
	rates[2] = cfg->reorder;
	rates[3] = cfg->corrupt;
	for (size_t i = 0; i < NCUTS; i++) {
		sum += rates[i];
		f->cut[i] = sum >= 1 ? 1ull << UNIFORM_BITS : (uint64_t)(sum * (double)(1ull << UNIFORM_BITS));
	}
	/* The salt goes through an odd multiplier so nearby salts seed far-apart states. */
	x = cfg->seed ^ (salt * 0xd1b54a32d192ed03ull);
	for (int i = 0; i < 4; i++)
		f->rng[i] = splitmix64(&x);
	return f;
}

enum rocemu_fault_action rocemu_fault_decide(struct rocemu_fault *f, size_t len,
					     struct rocemu_fault_decision *d)
{
	uint64_t u = xoshiro_next(f->rng) >> (64 - UNIFORM_BITS);

	*d = (struct rocemu_fault_decision){ .action = ROCEMU_FAULT_PASS,
					     .delay_ns = f->cfg.delay_us * 1000ull };
	for (size_t i = 0; i < NCUTS; i++) {
		if (u < f->cut[i]) {
			d->action = cut_action[i];
			break;
		}
	}
	if (d->action == ROCEMU_FAULT_DROP) {
		d->delay_ns = 0;
	} else if (d->action == ROCEMU_FAULT_CORRUPT) {
		uint64_t first = len > ROCEMU_BTH_BYTES ? ROCEMU_BTH_BYTES * 8 : 0;
		uint64_t nbits = len * 8 - first;

		/* Multiply-shift maps 32 random bits onto [0, nbits) (nbits < 2^20). */
		d->corrupt_bit = (uint32_t)(first + ((xoshiro_next(f->rng) >> 32) * nbits >> 32));
		if (!len)
			d->action = ROCEMU_FAULT_PASS;
	}
	return d->action;
}

static struct pending *pending_new(int fd, const struct sockaddr_in *dst, const uint8_t *data,
				   size_t len, uint64_t due_ns)
{
	struct pending *p = malloc(sizeof(*p) + len);

	if (!p)
		return NULL;
	*p = (struct pending){ .due_ns = due_ns, .fd = fd, .dst = *dst, .len = len };
	memcpy(p->data, data, len);
	return p;
}

static int pending_send(struct rocemu_fault *f, const struct pending *p)
{
	struct iovec iov = { (void *)p->data, p->len };

	return rocemu_loop_send(f->loop, p->fd, &p->dst, &iov, 1, 0);
}

static void queue_timer_fire(void *arg);

static void queue_arm(struct rocemu_fault *f)
{
	if (!f->head || f->queue_timer)
		return;
	f->queue_timer = rocemu_loop_timer_add(f->loop, f->head->due_ns, queue_timer_fire, f);
	if (!f->queue_timer)
		rocemu_log(ROCEMU_LOG_ERROR, "fault injector: no timer for delayed datagrams (%s)",
			   strerror(errno));
}

/* Send the queued datagrams due by now_ns, in order. */
static void queue_release(struct rocemu_fault *f, uint64_t now_ns)
{
	while (f->head && f->head->due_ns <= now_ns) {
		struct pending *p = f->head;
		int rc = pending_send(f, p);

		if (rc)
			rocemu_log(ROCEMU_LOG_DEBUG, "fault injector: delayed datagram lost (%s)",
				   strerror(-rc));
		f->head = p->next;
		f->queued--;
		free(p);
	}
	if (!f->head)
		f->tail = &f->head;
}

static void queue_timer_fire(void *arg)
{
	struct rocemu_fault *f = arg;

	f->queue_timer = 0;
	queue_release(f, rocemu_now_ns());
	queue_arm(f);
}

/* Send p now when nothing waits before it and it is due, else queue it; takes p. */
static int pending_emit(struct rocemu_fault *f, struct pending *p, uint64_t now_ns)
{
	int rc;

	if (!f->head && p->due_ns <= now_ns) {
		rc = pending_send(f, p);
		free(p);
		return rc;
	}
	if (f->queued >= ROCEMU_FAULT_QUEUE_MAX) {
		free(p);
		return -ENOBUFS;
	}
	p->next = NULL;
	*f->tail = p;
	f->tail = &p->next;
	f->queued++;
	queue_arm(f);
	return 0;
}

/* Send data now when nothing waits and no delay applies, else queue a copy. */
static int emit(struct rocemu_fault *f, int fd, const struct sockaddr_in *dst,
		const uint8_t *data, size_t len, uint64_t due_ns, uint64_t now_ns)
{
	struct iovec iov = { (void *)data, len };
	struct pending *p;

	if (!f->head && due_ns <= now_ns)
		return rocemu_loop_send(f->loop, fd, dst, &iov, 1, 0);
	p = pending_new(fd, dst, data, len, due_ns);
	return p ? pending_emit(f, p, now_ns) : -ENOMEM;
}

static void hold_timer_fire(void *arg)
{
	struct rocemu_fault *f = arg;
	struct pending *p = f->held;
	int rc;

	f->hold_timer = 0;
	f->held = NULL;
	rc = pending_emit(f, p, rocemu_now_ns());
	if (rc)
		rocemu_log(ROCEMU_LOG_DEBUG, "fault injector: held datagram lost (%s)",
			   strerror(-rc));
}

static int hold(struct rocemu_fault *f, int fd, const struct sockaddr_in *dst,
		const uint8_t *data, size_t len, uint64_t due_ns, uint64_t now_ns)
{
	uint64_t wait_ns = due_ns - now_ns > ROCEMU_FAULT_HOLD_NS ? due_ns - now_ns
								   : ROCEMU_FAULT_HOLD_NS;

	f->held = pending_new(fd, dst, data, len, due_ns);
	if (!f->held)
		return -ENOMEM;
	f->hold_timer = rocemu_loop_timer_add(f->loop, now_ns + wait_ns, hold_timer_fire, f);
	if (!f->hold_timer) {
		free(f->held);
		f->held = NULL;
		return -errno;
	}
	return 0;
}

/* The held datagram follows the one just sent: same due time, queued behind it. */
static int release_held(struct rocemu_fault *f, uint64_t due_ns, uint64_t now_ns)
{
	struct pending *p = f->held;

	rocemu_loop_timer_cancel(f->loop, f->hold_timer);
	f->hold_timer = 0;
	f->held = NULL;
	p->due_ns = due_ns;
	f->counters.reordered++;
	return pending_emit(f, p, now_ns);
}

/* The datagram with bit flipped, sent or queued like any other. */
static int emit_corrupt(struct rocemu_fault *f, int fd, const struct sockaddr_in *dst,
			const uint8_t *data, size_t len, uint32_t bit, uint64_t due_ns,
			uint64_t now_ns)
{
	struct pending *p = pending_new(fd, dst, data, len, due_ns);

	if (!p)
		return -ENOMEM;
	p->data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	return pending_emit(f, p, now_ns);
}

int rocemu_fault_apply(struct rocemu_fault *f, int fd, const struct sockaddr_in *dst,
		       const uint8_t *data, size_t len, uint64_t now_ns)
{
	struct rocemu_fault_decision d;
	uint64_t due_ns;
	int rc;

	if (!f || fd < 0 || !dst || (!data && len))
		return -EINVAL;
	if (len > MAX_UDP_PAYLOAD)
		return -EMSGSIZE;
	if (!f->active) {
		struct iovec iov = { (void *)data, len };

		rc = rocemu_loop_send(f->loop, fd, dst, &iov, 1, 0);
		return rc ? rc : ROCEMU_FAULT_PASS;
	}
	rocemu_fault_decide(f, len, &d);
	due_ns = now_ns + d.delay_ns;
	if (d.action == ROCEMU_FAULT_DROP) {
		f->counters.dropped++;
		return ROCEMU_FAULT_DROP;
	}
	if (d.action == ROCEMU_FAULT_REORDER && f->held)
		d.action = ROCEMU_FAULT_PASS;
	if (d.action == ROCEMU_FAULT_REORDER)
		rc = hold(f, fd, dst, data, len, due_ns, now_ns);
	else if (d.action == ROCEMU_FAULT_CORRUPT)
		rc = emit_corrupt(f, fd, dst, data, len, d.corrupt_bit, due_ns, now_ns);
	else
		rc = emit(f, fd, dst, data, len, due_ns, now_ns);
	if (!rc && d.action == ROCEMU_FAULT_DUPLICATE)
		rc = emit(f, fd, dst, data, len, due_ns, now_ns);
	if (rc)
		return rc;
	if (d.action != ROCEMU_FAULT_REORDER && f->held) {
		rc = release_held(f, due_ns, now_ns);
		if (rc)
			return rc;
	}
	f->counters.duplicated += d.action == ROCEMU_FAULT_DUPLICATE;
	f->counters.corrupted += d.action == ROCEMU_FAULT_CORRUPT;
	f->counters.delayed += d.delay_ns > 0;
	return (int)d.action;
}

void rocemu_fault_free(struct rocemu_fault *f)
{
	if (!f)
		return;
	rocemu_loop_timer_cancel(f->loop, f->queue_timer);
	rocemu_loop_timer_cancel(f->loop, f->hold_timer);
	queue_release(f, UINT64_MAX);
	if (f->held) {
		pending_send(f, f->held);
		free(f->held);
	}
	free(f);
}

const struct rocemu_fault_counters *rocemu_fault_counters(const struct rocemu_fault *f)
{
	return &f->counters;
}

const struct rocemu_fault_config *rocemu_fault_config(const struct rocemu_fault *f)
{
	return &f->cfg;
}
