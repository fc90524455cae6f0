/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "tools/stats_view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One report line split in place: device, counter name, value text. */
struct stats_line {
	char *dev, *name, *value;
};

static bool line_split(char *line, struct stats_line *l)
{
	char *save = NULL;

	l->dev = strtok_r(line, " ", &save);
	l->name = strtok_r(NULL, " ", &save);
	l->value = strtok_r(NULL, "", &save);
	return l->dev && l->name && l->value;
}

/* A JSON string of s: counter names and fault specs hold no character that needs more. */
static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, out);
	}
	fputc('"', out);
}

static void json_member(FILE *out, const struct stats_line *l, const char *prev_dev)
{
	if (!prev_dev || strcmp(prev_dev, l->dev)) {
		fputs(prev_dev ? "\n  },\n  " : "{\n  ", out);
		json_string(out, l->dev);
		fputs(": {\n    ", out);
	} else {
		fputs(",\n    ", out);
	}
	json_string(out, l->name);
	fputs(": ", out);
	/* Counters are numbers; the fault spec is text. */
	if (l->value[strspn(l->value, "0123456789")] == '\0')
		fputs(l->value, out);
	else
		json_string(out, l->value);
}

int stats_view_print(const char *report, const char *dev, bool json, FILE *out)
{
	char *copy = strdup(report), *line, *save = NULL, *prev_dev = NULL;
	struct stats_line l;

	if (!copy)
		return -ENOMEM;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!line_split(line, &l) || (dev && strcmp(dev, l.dev)))
			continue;
		if (json)
			json_member(out, &l, prev_dev);
		else
			fprintf(out, "%s %s %s\n", l.dev, l.name, l.value);
		prev_dev = l.dev;
	}
	if (json)
		fputs(prev_dev ? "\n  }\n}\n" : "{}\n", out);
	free(copy);
	return dev && !prev_dev ? -ENODEV : 0;
}
