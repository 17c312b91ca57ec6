/*
 * Fuzz target for conf/hsite.c (hdfs-site.xml, README "HDFS"): whatever
 * the input, the parse ends with 0 or an errno and a reason; a parsed file
 * has named properties, each found again by hsite_get, with no control
 * character and no value over CONF_MAX_LINE; the result always releases.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "conf/conf.h"
#include "conf/hsite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s)
{
	size_t n = strlen(s);

	if (n > CONF_MAX_LINE)
		__builtin_trap();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hsite s;
	char why[160];
	int line, rc;

	rc = hsite_parse((const char *)data, size, &s, why, sizeof(why), &line);
	if (rc) {
		if (rc > 0 || !why[0] || line < 0)
			__builtin_trap();
	} else {
		for (size_t i = 0; i < s.n; i++) {
			if (!s.p[i].name[0] || !s.p[i].value)
				__builtin_trap();
			check_text(s.p[i].name);
			check_text(s.p[i].value);
			if (hsite_get(&s, s.p[i].name) != &s.p[i])
				__builtin_trap(); /* one entry per name */
		}
	}
	hsite_release(&s);
	return 0;
}
