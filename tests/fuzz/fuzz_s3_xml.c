/*
 * Fuzz target for backends/s3_xml.c: every input goes through the
 * ListBucketResult and Error parsers.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backends/s3_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct s3_list l;
	struct s3_error e;
	size_t n = 0;

	if (s3_xml_parse_list((const char *)data, size, &l) == 0) {
		for (size_t i = 0; i < l.n_objs; i++)
			n += strlen(l.objs[i].key);
		for (size_t i = 0; i < l.n_prefixes; i++)
			n += strlen(l.prefixes[i]);
		s3_list_release(&l);
	}
	if (s3_xml_parse_error((const char *)data, size, &e) == 0)
		n += strlen(e.code) + strlen(e.message);
	return n == (size_t)-1;
}
