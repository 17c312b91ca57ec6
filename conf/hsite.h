/*
 * hsite — Hadoop's configuration XML (hdfs-site.xml, named by an HDFS
 * plugin-config's hdfs_site_path; README "HDFS").  Pure: text in,
 * properties out, no I/O.
 *
 *   <configuration>
 *     <property><name>N</name><value>V</value><final>true</final></property>
 *     <property name="N" value="V"/>
 *   </configuration>
 *
 * As Hadoop reads it: a later definition of a name replaces an earlier one
 * unless the earlier one is final.  What stfs cannot read as Hadoop would is
 * refused, not guessed: an xi:include (properties in another file), a
 * property without a name, a name or value with a control character or
 * over CONF_MAX_LINE bytes.  Values are kept as written (trimmed of
 * surrounding white space, as Hadoop trims them); ${...} is not expanded
 * here: the caller refuses it where it reads a value.
 */
#ifndef STFS_HSITE_H
#define STFS_HSITE_H

#include <stdbool.h>
#include <stddef.h>

struct hsite_prop {
	char *name, *value; /* value "" when the property has none */
	int line;	    /* of its <property> element */
	bool final;
};

struct hsite {
	struct hsite_prop *p;
	size_t n;
};

/**
 * Parse `len` bytes of `text` into *out (released with hsite_release, also
 * after an error).  0, or -EINVAL (not such a file: `why` says what, *line
 * where when known, else 0), -EFBIG (over CONF_MAX_FILE), -ENOMEM.
 */
int hsite_parse(const char *text, size_t len, struct hsite *out, char *why,
		size_t whylen, int *line);

/** The property `name`, or NULL. */
const struct hsite_prop *hsite_get(const struct hsite *s, const char *name);

void hsite_release(struct hsite *s);

#endif
