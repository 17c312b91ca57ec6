/*
 * s3_xml — libxml2 parsers for S3 answers.  Pure: see s3_xml.h.
 *
 * The document is parsed with XML_PARSE_NONET and without XML_PARSE_NOENT
 * or DTD loading, so an entity declared in an internal subset stays an
 * entity-reference node; node_text() reads only text and CDATA children,
 * so such an entity contributes nothing (no "billion laughs").
 */
#include "backends/s3_xml.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#define S3_TEXT_MAX (64 * 1024) /* longest element text we keep */

static bool is_elem(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE &&
	       !strcmp((const char *)n->name, name);
}

/*
 * The concatenated text/CDATA children of `n` (not descendants), malloc'd;
 * NULL when out of memory or too long.  `*len` gets the length.
 */
static char *node_text(const xmlNode *n, size_t *len)
{
	struct buf b;
	const xmlNode *c;

	buf_init(&b, S3_TEXT_MAX);
	for (c = n->children; c; c = c->next) {
		if (c->type != XML_TEXT_NODE &&
		    c->type != XML_CDATA_SECTION_NODE)
			continue;
		if (c->content && buf_puts(&b, (const char *)c->content) < 0) {
			buf_release(&b);
			return NULL;
		}
	}
	return buf_detach(&b, len);
}

/* copy text of `n` into a fixed buffer, control characters as '?' */
static void node_text_fixed(const xmlNode *n, char *out, size_t outsz)
{
	char *t = node_text(n, NULL);
	size_t i;

	if (!t) {
		out[0] = '\0';
		return;
	}
	snprintf(out, outsz, "%s", t);
	for (i = 0; out[i]; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = '?';
	free(t);
}

static const xmlNode *child(const xmlNode *n, const char *name)
{
	const xmlNode *c;

	for (c = n->children; c; c = c->next)
		if (is_elem(c, name))
			return c;
	return NULL;
}

/* a C0 control that XML 1.0 cannot carry (tab, LF and CR it can) */
static bool xml_bad_char(unsigned long c)
{
	return c < 0x20 && c != '\t' && c != '\n' && c != '\r';
}

/*
 * Length of a character reference "&#N;" / "&#xN;" at p (within n bytes)
 * that names a character XML 1.0 cannot carry; 0 when p holds none.
 */
static size_t bad_char_ref(const char *p, size_t n)
{
	unsigned long v = 0;
	size_t i = 2;
	bool hex = false;

	if (n < 4 || p[0] != '&' || p[1] != '#')
		return 0;
	if (p[2] == 'x' || p[2] == 'X') {
		hex = true;
		i = 3;
	}
	for (; i < n && i < 16 && p[i] != ';'; i++) {
		char c = p[i];

		if (c >= '0' && c <= '9')
			v = v * (hex ? 16 : 10) + (unsigned long)(c - '0');
		else if (hex && c >= 'a' && c <= 'f')
			v = v * 16 + (unsigned long)(c - 'a' + 10);
		else if (hex && c >= 'A' && c <= 'F')
			v = v * 16 + (unsigned long)(c - 'A' + 10);
		else
			return 0;
	}
	if (i >= n || p[i] != ';' || i == (hex ? 3u : 2u))
		return 0;
	return xml_bad_char(v) ? i + 1 : 0;
}

/*
 * S3 servers put object keys into listings as they are, so one key with a
 * control character (raw, as s3rver writes it, or as "&#x1;", as AWS does)
 * would make the whole document ill-formed and hide every other key.
 * Such characters become DEL (0x7f), which XML carries and which no
 * caller accepts in a name, so only the hostile entry is lost.
 * 0 with *clean NULL (nothing to do) or a malloc'd copy of *clean_len
 * bytes; -ENOMEM.
 */
static int sanitize(const char *xml, size_t len, char **clean,
		    size_t *clean_len)
{
	char *out = NULL;
	size_t i, o = 0, r;

	*clean = NULL;
	*clean_len = 0;
	for (i = 0; i < len; i++)
		if (xml_bad_char((unsigned char)xml[i]) ||
		    (xml[i] == '&' && bad_char_ref(xml + i, len - i)))
			break;
	if (i == len)
		return 0;
	out = malloc(len);
	if (!out)
		return -ENOMEM;
	for (i = 0; i < len;) {
		if (xml_bad_char((unsigned char)xml[i])) {
			out[o++] = 0x7f;
			i++;
		} else if (xml[i] == '&' &&
			   (r = bad_char_ref(xml + i, len - i)) != 0) {
			out[o++] = 0x7f;
			i += r;
		} else {
			out[o++] = xml[i++];
		}
	}
	*clean = out;
	*clean_len = o;
	return 0;
}

static int parse_doc(const char *xml, size_t len, const char *root_name,
		     xmlDoc **doc, const xmlNode **root)
{
	const xmlNode *r;
	char *clean;
	size_t clean_len;
	int rc;

	*doc = NULL;
	if (!xml || len == 0)
		return -EINVAL;
	if (len > S3_XML_MAX || len > INT_MAX)
		return -EFBIG;
	rc = sanitize(xml, len, &clean, &clean_len);
	if (rc < 0)
		return rc;
	xmlInitParser();
	*doc = xmlReadMemory(clean ? clean : xml,
			     (int)(clean ? clean_len : len), "s3.xml", NULL,
			     XML_PARSE_NONET | XML_PARSE_NOERROR |
				     XML_PARSE_NOWARNING | XML_PARSE_NOCDATA);
	free(clean);
	if (!*doc)
		return -EINVAL;
	r = xmlDocGetRootElement(*doc);
	if (!r || !is_elem(r, root_name)) {
		xmlFreeDoc(*doc);
		*doc = NULL;
		return -EINVAL;
	}
	*root = r;
	return 0;
}

int s3_parse_iso8601(const char *s, int64_t *ns)
{
	struct tm tm;
	const char *p;
	int64_t frac = 0, scale = 100000000;
	time_t t;

	if (!s)
		return -EINVAL;
	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return -EINVAL;
	if (*p == '.') {
		p++;
		if (!(*p >= '0' && *p <= '9'))
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			frac += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if (!strcmp(p, "Z") || !strcmp(p, "+00:00") || !strcmp(p, "+0000"))
		;
	else
		return -EINVAL;
	/* ns since 1970 in an int64 end in 2262 */
	if (tm.tm_year < 70 || tm.tm_year > 360)
		return -EINVAL;
	t = timegm(&tm);
	if (t == (time_t)-1 || t < 0 || t >= INT64_MAX / 1000000000LL - 1)
		return -EINVAL;
	*ns = (int64_t)t * 1000000000LL + frac;
	return 0;
}

/* a decimal that fits int64: 0 and *v; -EINVAL */
static int parse_u63(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	const char *p = s;

	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	if (!(*p >= '0' && *p <= '9'))
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (x > ((uint64_t)INT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -EINVAL;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	if (*p)
		return -EINVAL;
	*v = x;
	return 0;
}

static int list_add_obj(struct s3_list *l, const xmlNode *c)
{
	const xmlNode *k = child(c, "Key"), *sz = child(c, "Size"),
		      *lm = child(c, "LastModified");
	struct s3_obj o = {0}, *no;
	size_t klen = 0;
	char *t;

	if (!k) {
		l->n_bad++;
		return 0;
	}
	o.key = node_text(k, &klen);
	if (!o.key)
		return -ENOMEM;
	if (klen == 0 || strlen(o.key) != klen) {
		free(o.key);
		l->n_bad++;
		return 0;
	}
	if (sz) {
		t = node_text(sz, NULL);
		if (!t) {
			free(o.key);
			return -ENOMEM;
		}
		if (parse_u63(t, &o.size) < 0) {
			free(t);
			free(o.key);
			l->n_bad++;
			return 0;
		}
		free(t);
	}
	if (lm) {
		t = node_text(lm, NULL);
		if (!t) {
			free(o.key);
			return -ENOMEM;
		}
		if (s3_parse_iso8601(t, &o.mtime_ns) < 0)
			o.mtime_ns = 0;
		free(t);
	}
	no = realloc(l->objs, (l->n_objs + 1) * sizeof(*no));
	if (!no) {
		free(o.key);
		return -ENOMEM;
	}
	l->objs = no;
	l->objs[l->n_objs++] = o;
	return 0;
}

static int list_add_prefix(struct s3_list *l, const xmlNode *c)
{
	const xmlNode *p = child(c, "Prefix");
	size_t len = 0;
	char *t, **np;

	if (!p)
		return 0;
	t = node_text(p, &len);
	if (!t)
		return -ENOMEM;
	if (len == 0 || strlen(t) != len) {
		free(t);
		return 0;
	}
	np = realloc(l->prefixes, (l->n_prefixes + 1) * sizeof(*np));
	if (!np) {
		free(t);
		return -ENOMEM;
	}
	l->prefixes = np;
	l->prefixes[l->n_prefixes++] = t;
	return 0;
}

int s3_xml_parse_list(const char *xml, size_t len, struct s3_list *out)
{
	const xmlNode *root, *c;
	xmlDoc *doc;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = parse_doc(xml, len, "ListBucketResult", &doc, &root);
	if (rc < 0)
		return rc;
	for (c = root->children; c && rc == 0; c = c->next) {
		if (is_elem(c, "Contents")) {
			rc = list_add_obj(out, c);
		} else if (is_elem(c, "CommonPrefixes")) {
			rc = list_add_prefix(out, c);
		} else if (is_elem(c, "IsTruncated")) {
			char *t = node_text(c, NULL);

			if (!t)
				rc = -ENOMEM;
			else
				out->truncated = !strcmp(t, "true");
			free(t);
		} else if (is_elem(c, "NextContinuationToken")) {
			size_t tl = 0;

			free(out->next_token);
			out->next_token = node_text(c, &tl);
			if (!out->next_token) {
				rc = -ENOMEM;
			} else if (tl == 0 || strlen(out->next_token) != tl) {
				free(out->next_token);
				out->next_token = NULL;
			}
		}
	}
	xmlFreeDoc(doc);
	if (rc < 0)
		s3_list_release(out);
	return rc;
}

void s3_list_release(struct s3_list *l)
{
	size_t i;

	for (i = 0; i < l->n_objs; i++)
		free(l->objs[i].key);
	for (i = 0; i < l->n_prefixes; i++)
		free(l->prefixes[i]);
	free(l->objs);
	free(l->prefixes);
	free(l->next_token);
	memset(l, 0, sizeof(*l));
}

int s3_xml_parse_error(const char *xml, size_t len, struct s3_error *out)
{
	const xmlNode *root, *c;
	xmlDoc *doc;
	int rc;

	out->code[0] = '\0';
	out->message[0] = '\0';
	rc = parse_doc(xml, len, "Error", &doc, &root);
	if (rc < 0)
		return -EINVAL;
	c = child(root, "Code");
	if (c)
		node_text_fixed(c, out->code, sizeof(out->code));
	c = child(root, "Message");
	if (c)
		node_text_fixed(c, out->message, sizeof(out->message));
	xmlFreeDoc(doc);
	return 0;
}

static const struct {
	const char *code;
	int err;
} s3_codes[] = {
	{"NoSuchKey", ENOENT},
	{"NoSuchBucket", ENOENT},
	{"NoSuchUpload", ENOENT},
	{"NoSuchVersion", ENOENT},
	{"NotFound", ENOENT},
	{"AccessDenied", EACCES},
	{"AllAccessDisabled", EACCES},
	{"SignatureDoesNotMatch", EACCES},
	{"InvalidAccessKeyId", EACCES},
	{"InvalidSecurity", EACCES},
	{"InvalidToken", EACCES},
	{"ExpiredToken", EACCES},
	{"TokenRefreshRequired", EACCES},
	{"AccountProblem", EACCES},
	{"RequestTimeTooSkewed", EACCES},
	{"AuthorizationHeaderMalformed", EACCES},
	{"InvalidObjectState", EACCES},
	{"SlowDown", EAGAIN},
	{"Throttling", EAGAIN},
	{"ThrottlingException", EAGAIN},
	{"RequestLimitExceeded", EAGAIN},
	{"TooManyRequests", EAGAIN},
	{"RequestTimeout", EAGAIN},
	{"ServiceUnavailable", EIO},
	{"InternalError", EIO},
	{"InvalidRange", ERANGE},
	{"InvalidArgument", EINVAL},
	{"InvalidRequest", EINVAL},
	{"InvalidBucketName", EINVAL},
	{"MalformedXML", EINVAL},
	{"InvalidDigest", EINVAL},
	{"BadDigest", EINVAL},
	{"KeyTooLongError", ENAMETOOLONG},
	{"EntityTooLarge", EFBIG},
	{"NotImplemented", ENOSYS},
	{"MethodNotAllowed", EPERM},
	{"PermanentRedirect", EIO},
	{"TemporaryRedirect", EAGAIN},
	{"PreconditionFailed", EEXIST},
	{"BucketAlreadyExists", EEXIST},
	{"OperationAborted", EAGAIN},
};

int s3_code_to_errno(const char *code)
{
	size_t i;

	if (!code || !*code)
		return 0;
	for (i = 0; i < sizeof(s3_codes) / sizeof(s3_codes[0]); i++)
		if (!strcmp(s3_codes[i].code, code))
			return -s3_codes[i].err;
	return 0;
}
