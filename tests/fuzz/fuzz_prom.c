/*
 * Fuzz target for fusefs/view/prom.c: the input is parsed as a JSON metrics
 * object (anything jansson accepts, NULs in strings allowed) and rendered
 * for a few jobs, one of them with the raw input bytes as id and state
 * (invalid UTF-8, quotes, newlines).  Besides not crashing, the output must
 * be valid text format 0.0.4: valid UTF-8, HELP then TYPE once per family,
 * no empty family, samples only under their family header, escaped labels,
 * finite numeric values, counters named *_total, no duplicate series.
 * A render into a tiny buffer must fail cleanly and leave it untouched.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/buf.h"
#include "view/prom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                              \
	do {                                                                  \
		if (!(c)) {                                                   \
			fprintf(stderr, "fuzz_prom: check failed: %s\n", #c); \
			abort();                                              \
		}                                                             \
	} while (0)

static bool utf8_ok(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		size_t len, k;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			len = 2;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			len = 3;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i < len)
			return false;
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

static bool name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

/* Length of a metric/label name at p (0 if none). */
static size_t name_len(const char *p)
{
	size_t n = 0;

	if (!name_start(p[0]))
		return 0;
	while (name_char(p[n]))
		n++;
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct checker {
	char **fams;
	size_t nfams;
	char **series;
	size_t nseries;
};

static void push(char ***arr, size_t *n, const char *s, size_t len)
{
	char **a = realloc(*arr, (*n + 1) * sizeof(*a));

	CHECK(a);
	*arr = a;
	a[*n] = strndup(s, len);
	CHECK(a[*n]);
	(*n)++;
}

/* Validate one sample line of family `fam`; records its series key. */
static void check_sample(struct checker *ck, const char *line, size_t len,
			 const char *fam)
{
	size_t fl = strlen(fam), i;
	char val[64];
	char *end;
	double d;

	CHECK(len > fl && !memcmp(line, fam, fl));
	i = fl;
	CHECK(line[i] == '{');
	i++;
	for (;;) {
		size_t ln = name_len(line + i);

		CHECK(ln > 0);
		i += ln;
		CHECK(line[i] == '=' && line[i + 1] == '"');
		i += 2;
		while (line[i] != '"') {
			CHECK(i < len && line[i] != '\n');
			if (line[i] == '\\') {
				CHECK(line[i + 1] == '\\' ||
				      line[i + 1] == '"' || line[i + 1] == 'n');
				i++;
			}
			i++;
		}
		i++;
		if (line[i] == '}')
			break;
		CHECK(line[i] == ',');
		i++;
	}
	i++;
	push(&ck->series, &ck->nseries, line, i);
	CHECK(line[i] == ' ');
	i++;
	CHECK(len - i > 0 && len - i < sizeof(val));
	memcpy(val, line + i, len - i);
	val[len - i] = '\0';
	d = strtod(val, &end);
	CHECK(*end == '\0' && isfinite(d));
	CHECK(val[0] == '-' || (val[0] >= '0' && val[0] <= '9'));
}

static void check_output(const char *s, size_t n)
{
	struct checker ck = {0};
	char fam[PROM_NAME_MAX + 32] = "";
	size_t samples = 0, i;
	bool have = false;
	const char *p = s, *e = s + n;

	CHECK(strlen(s) == n);
	CHECK(utf8_ok((const unsigned char *)s, n));
	CHECK(n == 0 || s[n - 1] == '\n');
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t len = (size_t)(nl - p), ln;

		if (!strncmp(p, "# HELP ", 7)) {
			CHECK(!have || samples > 0);
			ln = name_len(p + 7);
			CHECK(ln > 0 && ln < sizeof(fam) && p[7 + ln] == ' ');
			memcpy(fam, p + 7, ln);
			fam[ln] = '\0';
			push(&ck.fams, &ck.nfams, fam, ln);
			for (i = 8 + ln; i < len; i++) {
				if (p[i] == '\\') {
					CHECK(p[i + 1] == '\\' ||
					      p[i + 1] == 'n');
					i++;
				}
			}
			/* TYPE must follow */
			p = nl + 1;
			CHECK(p < e);
			nl = memchr(p, '\n', (size_t)(e - p));
			CHECK(nl);
			len = (size_t)(nl - p);
			CHECK(!strncmp(p, "# TYPE ", 7));
			CHECK(!strncmp(p + 7, fam, ln) && p[7 + ln] == ' ');
			if (len == 7 + ln + 1 + 7 &&
			    !memcmp(p + 8 + ln, "counter", 7)) {
				CHECK(ln > 6 &&
				      !strcmp(fam + ln - 6, "_total"));
			} else {
				CHECK(len == 7 + ln + 1 + 5 &&
				      !memcmp(p + 8 + ln, "gauge", 5));
				CHECK(ln < 6 || strcmp(fam + ln - 6, "_total"));
			}
			have = true;
			samples = 0;
		} else {
			CHECK(p[0] != '#');
			CHECK(have);
			check_sample(&ck, p, len, fam);
			samples++;
		}
		p = nl + 1;
	}
	CHECK(!have || samples > 0);
	qsort(ck.fams, ck.nfams, sizeof(*ck.fams), cmp_str);
	for (i = 1; i < ck.nfams; i++)
		CHECK(strcmp(ck.fams[i - 1], ck.fams[i]));
	qsort(ck.series, ck.nseries, sizeof(*ck.series), cmp_str);
	for (i = 1; i < ck.nseries; i++)
		CHECK(strcmp(ck.series[i - 1], ck.series[i]));
	for (i = 0; i < ck.nfams; i++)
		free(ck.fams[i]);
	for (i = 0; i < ck.nseries; i++)
		free(ck.series[i]);
	free(ck.fams);
	free(ck.series);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t err;
	json_t *root = json_loadb((const char *)data, size,
				  JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
	char raw[65];
	size_t rl = size < 64 ? size : 64;
	struct buf b;
	int rc;

	memcpy(raw, data, rl);
	raw[rl] = '\0';
	struct prom_job jobs[] = {
		{.id = "1",
		 .name = "fuzz",
		 .state_name = "RUNNING",
		 .metrics = root,
		 .has_storage = 1,
		 .objects = size,
		 .bytes = UINT64_MAX,
		 .newest_ckpt_ms = (int64_t)size * 999},
		{.id = raw,
		 .name = NULL,
		 .state_name = raw,
		 .metrics = root,
		 .has_storage = (int)(size & 1),
		 .newest_ckpt_ms = INT64_MAX},
		{.id = "1",
		 .name = "dup",
		 .state_name = "FAILED",
		 .metrics = root},
		{.id = "2",
		 .name = raw,
		 .state_name = NULL,
		 .metrics = json_object_get(root, "m")},
		{.id = NULL, .metrics = root},
	};

	buf_init(&b, BUF_DEFAULT_MAX * 8);
	rc = prom_render_jobs(&b, jobs, sizeof(jobs) / sizeof(jobs[0]));
	CHECK(rc == 0 || rc == -EFBIG || rc == -ENOMEM);
	if (!rc)
		check_output(b.data ? b.data : "", b.len);
	buf_release(&b);

	/* a cap that cuts the output somewhere: all or nothing */
	buf_init(&b, 64 + size % 512);
	rc = prom_render_jobs(&b, jobs, sizeof(jobs) / sizeof(jobs[0]));
	CHECK(rc == 0 || rc == -EFBIG || rc == -ENOMEM);
	if (rc)
		CHECK(b.len == 0);
	else
		check_output(b.data ? b.data : "", b.len);
	buf_release(&b);

	json_decref(root);
	return 0;
}
