/*
 * Fuzz target for backends/awscred.c's parsers: every input goes through
 * the shared credentials / config file parser (three profiles and
 * credentials_file=, both file kinds), the ECS/IMDS JSON parser and the time
 * parser.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/awscred.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* NULL: credentials_file= (every section, stfs's key names) */
	static const char *const profiles[] = {"default", "prod", "a b", NULL};
	const char *t = (const char *)data;
	struct awscred_keys k;
	size_t n = 0;
	int64_t ms;
	char *z;

	for (size_t i = 0; i < 4; i++)
		for (int cfg = 0; cfg < 2; cfg++)
			if (awscred_parse_ini(t, size, profiles[i], cfg, &k) ==
			    0) {
				n += strlen(k.ak) + strlen(k.sk) +
				     (k.tok ? strlen(k.tok) : 0);
				awscred_keys_wipe(&k);
			}
	if (awscred_parse_json(t, size, &k) == 0) {
		n += strlen(k.ak) + strlen(k.sk);
		awscred_keys_wipe(&k);
	}
	z = malloc(size + 1);
	if (z) {
		memcpy(z, data, size);
		z[size] = '\0';
		if (awscred_parse_time(z, &ms) == 0)
			n += (size_t)(ms & 1);
		free(z);
	}
	return n == (size_t)-1;
}
