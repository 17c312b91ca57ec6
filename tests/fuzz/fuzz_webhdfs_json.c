/*
 * Fuzz target for backends/webhdfs_json.c: every input goes through the
 * listing, file-status, boolean, delegation-token, long and RemoteException
 * parsers and the exception table.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backends/webhdfs_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct whj_list l;
	struct whj_entry e;
	struct whj_error err;
	unsigned fl;
	size_t n = 0;
	bool b;
	char tok[WHJ_TOKEN_MAX + 1];
	int64_t v;

	if (whj_parse_list(s, size, &l) == 0) {
		for (size_t i = 0; i < l.n; i++)
			n += strlen(l.ents[i].name) + l.ents[i].length;
		whj_list_release(&l);
	}
	if (whj_parse_status(s, size, &e) == 0)
		n += e.length;
	if (whj_parse_boolean(s, size, &b) == 0)
		n += b;
	if (whj_parse_token(s, size, tok, sizeof(tok)) == 0)
		n += strlen(tok);
	if (whj_parse_long(s, size, &v) == 0)
		n += (size_t)v;
	if (whj_parse_error(s, size, &err) == 0)
		n += strlen(err.message) +
		     (size_t)-whj_exception_errno(err.exception, &fl);
	return n == (size_t)-1;
}
