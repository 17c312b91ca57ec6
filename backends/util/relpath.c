/*
 * relpath — validity of backend paths.  See relpath.h.
 */
#include "util/relpath.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

int relpath_check(const char *path)
{
	const char *p = path, *e;

	if (!path)
		return -EINVAL;
	if (!*path)
		return 0;
	for (;;) {
		size_t n;

		e = strchr(p, '/');
		n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (!e)
			return 0;
		p = e + 1;
	}
}
