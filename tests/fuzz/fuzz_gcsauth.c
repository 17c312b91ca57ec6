/*
 * Fuzz target for backends/gcsauth.c's parsers: every input goes through
 * the service-account key parser and the token response parser.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/gcsauth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *t = (const char *)data;
	struct gcs_sa sa;
	char *tok = NULL;
	int64_t ei = 0;
	size_t n = 0;

	if (gcsauth_parse_key(t, size, &sa) == 0) {
		n += strlen(sa.email) + strlen(sa.private_key) +
		     strlen(sa.token_uri);
		gcs_sa_wipe(&sa);
	}
	if (gcsauth_parse_token(t, size, &tok, &ei) == 0) {
		n += strlen(tok) + (size_t)(ei & 1);
		free(tok);
	}
	return n == (size_t)-1;
}
