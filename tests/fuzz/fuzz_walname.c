/*
 * Fuzz the documented layout's partition-file name parser
 * (imapsum_doc_partition: "<name>-<partition>.wal").  Cross-checks: an
 * accepted name has a non-empty map name, a '-', only digits up to ".wal",
 * and no '/'; a rejected one violates one of those.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/imapsum.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The rule, written out independently. */
static bool expect(const char *s, size_t n)
{
	size_t d = n;

	if (n < 4 || memcmp(s + n - 4, ".wal", 4) != 0 || memchr(s, '/', n))
		return false;
	while (d > 0 && s[d - 1] != '-')
		d--;
	if (d < 2) /* no '-', or an empty name before it */
		return false;
	for (size_t i = d; i < n - 4; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return d < n - 4; /* at least one digit */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	size_t nl = (size_t)-1;
	bool got;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	size = strlen(s); /* names are C strings */
	got = imapsum_doc_partition(s, &nl);
	if (got != expect(s, size))
		abort();
	if (got && (nl == 0 || nl >= size || s[nl] != '-'))
		abort();
	free(s);
	return 0;
}
