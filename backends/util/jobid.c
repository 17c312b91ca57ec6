/*
 * jobid — see jobid.h.
 */
#include "util/jobid.h"

#include <errno.h>
#include <string.h>

#define MAX_ID "9223372036854775807" /* INT64_MAX */

static bool all_digits(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

bool jobid_canonical(const char *s, size_t len)
{
	if (!s || len == 0 || len > 19 || !all_digits(s, len))
		return false;
	if (len > 1 && s[0] == '0')
		return false;
	return len < 19 || memcmp(s, MAX_ID, 19) <= 0;
}

int jobid_cmp(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int c;

	if (la != lb)
		return la < lb ? -1 : 1;
	c = memcmp(a, b, la);
	return (c > 0) - (c < 0);
}

int jobid_normalize(const char *s, size_t len, char out[JOBID_SZ])
{
	if (!s || len == 0 || !all_digits(s, len))
		return -EINVAL;
	while (len > 1 && s[0] == '0') {
		s++;
		len--;
	}
	if (!jobid_canonical(s, len))
		return -EINVAL;
	memcpy(out, s, len);
	out[len] = '\0';
	return 0;
}
