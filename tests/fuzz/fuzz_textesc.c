/*
 * Fuzz target for backends/util/textesc.c and backends/util/jobid.c: any bytes,
 * escaped with every flag combination, give one line of printable text
 * (no control byte, no C1, no bidi override) that unescapes to the input;
 * jobid_normalize() of them gives a canonical id or nothing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/jobid.h"
#include "util/textesc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                          \
	do {                              \
		if (!(x))                 \
			__builtin_trap(); \
	} while (0)

static int hexval(int c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

static void check_escaped(const uint8_t *in, size_t n, unsigned flags)
{
	struct buf b;
	size_t o = 0, l;
	uint8_t *back;

	buf_init(&b, 4 * n + 16);
	CHECK(textesc_append(&b, (const char *)in, n, flags) == 0);
	back = malloc(n + 1);
	CHECK(back);
	for (size_t i = 0; i < b.len; i++) {
		const unsigned char *p = (const unsigned char *)b.data + i;

		/* only plain characters in the output */
		CHECK(textesc_classify(p, b.len - i, &l) == TEXTESC_PLAIN);
		CHECK(!(flags & TEXTESC_ASCII) || *p < 0x80);
		if (*p != '\\') {
			CHECK(!(flags & TEXTESC_QUOTE) || *p != '"');
			memcpy(back + o, p, l);
			o += l;
			i += l - 1;
			continue;
		}
		CHECK(i + 1 < b.len);
		switch (p[1]) {
		case 'n':
			back[o++] = '\n';
			break;
		case 'r':
			back[o++] = '\r';
			break;
		case 't':
			back[o++] = '\t';
			break;
		case 'x':
			CHECK(i + 3 < b.len);
			back[o++] = (uint8_t)(hexval(p[2]) * 16 + hexval(p[3]));
			i += 2;
			break;
		default:
			CHECK(p[1] == '\\' || p[1] == '"');
			back[o++] = p[1];
		}
		i++;
		CHECK(o <= n);
	}
	CHECK(o == n && (n == 0 || memcmp(back, in, n) == 0));
	free(back);
	buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char id[JOBID_SZ];

	for (unsigned f = 0; f < 4; f++)
		check_escaped(data, size, f);
	if (jobid_normalize((const char *)data, size, id) == 0) {
		CHECK(jobid_canonical(id, strlen(id)));
		CHECK(strlen(id) <= size);
	} else {
		CHECK(!jobid_canonical((const char *)data, size));
	}
	return 0;
}
