/*
 * layout — strict parsing of the names the engine writes (catalog.h).
 * Pure functions, thread-safe, no allocation.
 */
#include "model/catalog.h"

#include <errno.h>
#include <string.h>

/*
 * Parse the decimal field at *pp up to (not including) `stop`: 1..maxdig
 * ASCII digits whose value fits in `max`.  Advances *pp past the digits.
 * 0 or -EINVAL.
 */
static int parse_field(const char **pp, char stop, size_t maxdig, int64_t max,
		       int64_t *out)
{
	const char *p = *pp;
	int64_t v = 0;
	size_t n = 0;

	while (*p >= '0' && *p <= '9') {
		if (++n > maxdig)
			return -EINVAL;
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, *p - '0', &v) || v > max)
			return -EINVAL;
		p++;
	}
	if (n == 0 || *p != stop)
		return -EINVAL;
	*pp = p;
	*out = v;
	return 0;
}

int layout_parse_real(const char *name, struct real_name *out)
{
	const char *p = name;
	int64_t ts, rnd, pid, cid;
	bool crc;

	if (!name || !out)
		return -EINVAL;
	/* Hadoop's ChecksumFileSystem names a sidecar "." + name + ".crc" */
	crc = *p == '.';
	if (crc)
		p++;
	if (parse_field(&p, '-', 19, INT64_MAX, &ts) < 0)
		return -EINVAL;
	p++;
	if (parse_field(&p, '-', 10, INT32_MAX, &rnd) < 0)
		return -EINVAL;
	p++;
	if (parse_field(&p, '-', 10, INT32_MAX, &pid) < 0)
		return -EINVAL;
	p++;
	if (parse_field(&p, '.', 19, INT64_MAX, &cid) < 0)
		return -EINVAL;
	p++;
	if (!strcmp(p, crc ? "ser.crc" : "ser"))
		out->tmp = false;
	else if (!strcmp(p, crc ? "sertmp.crc" : "sertmp"))
		out->tmp = true;
	else
		return -EINVAL;
	out->crc = crc;
	out->write_ts = ts;
	out->rnd = (int32_t)rnd;
	out->pipeline_id = (int32_t)pid;
	out->checkpoint_id = cid;
	return 0;
}
