/*
 * timefmt — time stamps for file records.  See timefmt.h.
 */
#include "util/timefmt.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>

void timefmt_iso_ms(int64_t ms, char *out, size_t sz)
{
	int64_t s = ms / 1000, frac = ms % 1000;
	time_t t;
	struct tm tm;

	if (frac < 0) {
		frac += 1000;
		s--;
	}
	t = (time_t)s;
	if (!gmtime_r(&t, &tm)) {
		snprintf(out, sz, "@%" PRId64, ms);
		return;
	}
	snprintf(out, sz, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, (int)frac);
}
