/*
 * Fuzz the config parsers.  The first byte picks the parser:
 *   0: conf_parse_mem (the stfs.conf `key = value` format)
 *   1: conf_import_seatunnel_yaml_mem
 *   2: conf_import_hazelcast_yaml_mem
 * the rest is the input.  Every mode then validates and renders the result
 * and releases it, so leaks and use-after-free show up under ASan.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/buf.h"
#include "conf/conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stfs_conf c;
	struct conf_err err;
	struct buf out;
	const char *text;
	int rc;

	if (size < 1)
		return 0;
	if (conf_init_defaults(&c))
		return 0;
	text = (const char *)data + 1;
	switch (data[0] % 3) {
	case 0:
		rc = conf_parse_mem(&c, "fuzz", text, size - 1, &err);
		break;
	case 1:
		rc = conf_import_seatunnel_yaml_mem(&c, "fuzz", text, size - 1,
						    &err);
		break;
	default:
		rc = conf_import_hazelcast_yaml_mem(&c, "fuzz", text, size - 1,
						    &err);
		break;
	}
	if (rc) {
		/* an error always says something and stays in its buffer */
		if (!memchr(err.msg, '\0', sizeof(err.msg)) || !err.msg[0])
			__builtin_trap();
	}
	(void)conf_validate(&c, &err);
	buf_init(&out, BUF_DEFAULT_MAX);
	if (conf_render(&c, &out) == 0 && out.data &&
	    strlen(out.data) != out.len)
		__builtin_trap();
	buf_release(&out);
	conf_release(&c);
	return 0;
}
