/*
 * hsite — see hsite.h.  libxml2 with XML_PARSE_NONET and without
 * XML_PARSE_NOENT or DTD loading: an entity declared in an internal subset
 * stays an entity-reference node, and text() reads only text and CDATA
 * children, so such an entity contributes nothing (no "billion laughs",
 * no file read through an external entity).
 */
#include "conf/hsite.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "conf/conf.h"
#include "util/buf.h"

static bool is_elem(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE &&
	       !strcmp((const char *)n->name, name);
}

static int line_of(const xmlNode *n)
{
	long l = xmlGetLineNo(n);

	return l > 0 && l < INT_MAX ? (int)l : 0;
}

/* `s` trimmed of white space as a new string (in *out); -EINVAL when too
 * long or holding a control character, -ENOMEM */
static int trimmed(const char *s, size_t n, char **out)
{
	*out = NULL;
	while (n && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' ||
		     s[n - 1] == '\r'))
		n--;
	if (n > CONF_MAX_LINE)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return -EINVAL;
	*out = strndup(s, n);
	return *out ? 0 : -ENOMEM;
}

/* the text and CDATA children of `n` (not descendants), trimmed */
static int text(const xmlNode *n, char **out)
{
	struct buf b;
	int rc = 0;

	buf_init(&b, 2 * (size_t)CONF_MAX_LINE);
	for (const xmlNode *c = n->children; c && !rc; c = c->next)
		if ((c->type == XML_TEXT_NODE ||
		     c->type == XML_CDATA_SECTION_NODE) &&
		    c->content)
			rc = buf_puts(&b, (const char *)c->content) < 0
				     ? -EINVAL
				     : 0;
	if (!rc)
		rc = trimmed(b.data ? b.data : "", b.len, out);
	buf_release(&b);
	return rc;
}

static int attr(const xmlNode *n, const char *name, char **out)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	int rc;

	*out = NULL;
	if (!v)
		return 0;
	rc = trimmed((const char *)v, strlen((const char *)v), out);
	xmlFree(v);
	return rc;
}

static int fail(char *why, size_t whylen, int *line, const xmlNode *at, int rc,
		const char *msg)
{
	snprintf(why, whylen, "%s", msg);
	*line = at ? line_of(at) : 0;
	return rc;
}

/* an xi:include, in any namespace prefix */
static bool is_include(const xmlNode *n)
{
	return n->type == XML_ELEMENT_NODE &&
	       !strcmp((const char *)n->name, "include") && n->ns &&
	       n->ns->href &&
	       !strcmp((const char *)n->ns->href,
		       "http://www.w3.org/2001/XInclude");
}

static int add(struct hsite *s, char *name, char *value, int line, bool final)
{
	struct hsite_prop *p;

	for (size_t i = 0; i < s->n; i++) {
		p = &s->p[i];
		if (strcmp(p->name, name))
			continue;
		if (!p->final) { /* a later definition wins, unless final */
			free(p->value);
			p->value = value;
			p->line = line;
			p->final = final;
			value = NULL;
		}
		free(name);
		free(value);
		return 0;
	}
	p = realloc(s->p, (s->n + 1) * sizeof(*s->p));
	if (!p) {
		free(name);
		free(value);
		return -ENOMEM;
	}
	s->p = p;
	s->p[s->n++] = (struct hsite_prop){name, value, line, final};
	return 0;
}

/* one <property> */
static int property(struct hsite *s, const xmlNode *pe, char *why,
		    size_t whylen, int *line)
{
	char *name = NULL, *value = NULL, *fin = NULL;
	int rc;

	/* Hadoop's attribute form first, the child elements win */
	rc = attr(pe, "name", &name);
	if (!rc)
		rc = attr(pe, "value", &value);
	if (!rc)
		rc = attr(pe, "final", &fin);
	for (const xmlNode *c = pe->children; c && !rc; c = c->next) {
		char **slot = NULL;

		if (is_include(c))
			rc = fail(why, whylen, line, c, -EINVAL,
				  "xi:include is not supported");
		else if (is_elem(c, "name"))
			slot = &name;
		else if (is_elem(c, "value"))
			slot = &value;
		else if (is_elem(c, "final"))
			slot = &fin;
		if (slot) {
			free(*slot);
			rc = text(c, slot);
		}
	}
	if (rc == -EINVAL && !why[0])
		rc = fail(why, whylen, line, pe, rc,
			  "a property name or value is too long or holds a "
			  "control character");
	if (!rc && (!name || !*name))
		rc = fail(why, whylen, line, pe, -EINVAL,
			  "a property without a name");
	if (!rc && !value && !(value = strdup("")))
		rc = -ENOMEM;
	if (!rc) {
		rc = add(s, name, value, line_of(pe),
			 fin && !strcmp(fin, "true"));
		name = value = NULL;
	}
	free(name);
	free(value);
	free(fin);
	return rc;
}

static int configuration(struct hsite *s, const xmlNode *conf, char *why,
			 size_t whylen, int *line, int depth)
{
	int rc = 0;

	for (const xmlNode *c = conf->children; c && !rc; c = c->next) {
		if (is_include(c))
			rc = fail(why, whylen, line, c, -EINVAL,
				  "xi:include is not supported");
		else if (is_elem(c, "property"))
			rc = property(s, c, why, whylen, line);
		else if (is_elem(c, "configuration") && depth < 8)
			/* Hadoop reads nested configurations too */
			rc = configuration(s, c, why, whylen, line, depth + 1);
	}
	return rc;
}

int hsite_parse(const char *text_in, size_t len, struct hsite *out, char *why,
		size_t whylen, int *line)
{
	const xmlNode *root;
	xmlDoc *doc;
	int rc;

	memset(out, 0, sizeof(*out));
	why[0] = '\0';
	*line = 0;
	if (len > (size_t)CONF_MAX_FILE || len > INT_MAX)
		return fail(why, whylen, line, NULL, -EFBIG, "file too large");
	if (!len)
		return fail(why, whylen, line, NULL, -EINVAL, "empty file");
	xmlInitParser();
	doc = xmlReadMemory(text_in, (int)len, "hdfs-site.xml", NULL,
			    XML_PARSE_NONET | XML_PARSE_NOERROR |
				    XML_PARSE_NOWARNING);
	if (!doc) {
		const xmlError *e = xmlGetLastError();

		*line = e && e->line > 0 ? e->line : 0;
		snprintf(why, whylen, "not XML");
		return -EINVAL;
	}
	root = xmlDocGetRootElement(doc);
	if (!root || !is_elem(root, "configuration"))
		rc = fail(why, whylen, line, root, -EINVAL,
			  "the root element is not <configuration>");
	else
		rc = configuration(out, root, why, whylen, line, 0);
	xmlFreeDoc(doc);
	if (rc == -ENOMEM)
		snprintf(why, whylen, "out of memory");
	return rc;
}

const struct hsite_prop *hsite_get(const struct hsite *s, const char *name)
{
	for (size_t i = 0; s && name && i < s->n; i++)
		if (!strcmp(s->p[i].name, name))
			return &s->p[i];
	return NULL;
}

void hsite_release(struct hsite *s)
{
	for (size_t i = 0; s && i < s->n; i++) {
		free(s->p[i].name);
		free(s->p[i].value);
	}
	if (s) {
		free(s->p);
		s->p = NULL;
		s->n = 0;
	}
}
