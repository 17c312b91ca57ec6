/*
 * webhdfs_json.c — pure parsing of WebHDFS answers (jansson).  See the
 * header for the shapes and the rules for hostile input.
 */
#include "backends/webhdfs_json.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

static json_t *load(const char *json, size_t len, int *rc)
{
	json_error_t je;
	json_t *root;

	if (len > WHJ_MAX) {
		*rc = -EFBIG;
		return NULL;
	}
	root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (!root || !json_is_object(root)) {
		json_decref(root);
		*rc = -EPROTO;
		return NULL;
	}
	*rc = 0;
	return root;
}

/* a listed name: one component, no control character, not "." or ".." */
static bool name_ok(const char *s, bool allow_empty)
{
	const unsigned char *c;

	if (!*s)
		return allow_empty;
	if (!strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (c = (const unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c == 0x7f || *c == '/')
			return false;
	return true;
}

/* 0 and *e filled (name borrowed from the json, not copied); -1 bad */
static int entry_from(json_t *o, struct whj_entry *e, const char **name)
{
	json_t *t = json_object_get(o, "type");
	json_t *len = json_object_get(o, "length");
	json_t *mt = json_object_get(o, "modificationTime");
	json_t *ps = json_object_get(o, "pathSuffix");
	const char *ts;

	if (!json_is_object(o) || !json_is_string(t))
		return -1;
	ts = json_string_value(t);
	if (!strcmp(ts, "FILE"))
		e->type = WHJ_FILE;
	else if (!strcmp(ts, "DIRECTORY"))
		e->type = WHJ_DIR;
	else if (!strcmp(ts, "SYMLINK"))
		e->type = WHJ_SYMLINK;
	else
		return -1;
	e->length = 0;
	if (len) {
		if (!json_is_integer(len) || json_integer_value(len) < 0)
			return -1;
		e->length = (uint64_t)json_integer_value(len);
	}
	if (e->type != WHJ_FILE)
		e->length = 0;
	e->mtime_ms = 0;
	if (mt && json_is_integer(mt) && json_integer_value(mt) > 0 &&
	    json_integer_value(mt) < INT64_MAX / 1000000)
		e->mtime_ms = json_integer_value(mt);
	if (name) {
		if (!json_is_string(ps))
			return -1;
		*name = json_string_value(ps);
		if (strlen(*name) != json_string_length(ps))
			return -1; /* an embedded NUL */
	}
	return 0;
}

void whj_list_release(struct whj_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->ents[i].name);
	free(l->ents);
	memset(l, 0, sizeof(*l));
}

int whj_parse_list(const char *json, size_t len, struct whj_list *out)
{
	json_t *root, *arr, *dl, *fss;
	size_t i, n;
	int rc;

	memset(out, 0, sizeof(*out));
	root = load(json, len, &rc);
	if (!root)
		return rc;
	dl = json_object_get(root, "DirectoryListing");
	if (dl) {
		json_t *rem = json_object_get(dl, "remainingEntries");
		json_t *pl = json_object_get(dl, "partialListing");

		if (!json_is_object(dl) || !json_is_object(pl) ||
		    !json_is_integer(rem) || json_integer_value(rem) < 0) {
			rc = -EPROTO;
			goto out;
		}
		out->batch = true;
		out->remaining = (uint64_t)json_integer_value(rem);
		fss = json_object_get(pl, "FileStatuses");
	} else {
		fss = json_object_get(root, "FileStatuses");
	}
	arr = json_is_object(fss) ? json_object_get(fss, "FileStatus") : NULL;
	if (!json_is_array(arr)) {
		rc = -EPROTO;
		goto out;
	}
	n = json_array_size(arr);
	out->ents = calloc(n ? n : 1, sizeof(*out->ents));
	if (!out->ents) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct whj_entry e;
		const char *name;

		if (entry_from(json_array_get(arr, i), &e, &name) < 0 ||
		    !name_ok(name, n == 1)) {
			out->n_bad++;
			continue;
		}
		e.name = strdup(name);
		if (!e.name) {
			rc = -ENOMEM;
			goto out;
		}
		out->ents[out->n++] = e;
	}
out:
	json_decref(root);
	if (rc < 0)
		whj_list_release(out);
	return rc;
}

int whj_parse_status(const char *json, size_t len, struct whj_entry *out)
{
	json_t *root;
	int rc;

	memset(out, 0, sizeof(*out));
	root = load(json, len, &rc);
	if (!root)
		return rc;
	if (entry_from(json_object_get(root, "FileStatus"), out, NULL) < 0) {
		memset(out, 0, sizeof(*out));
		rc = -EPROTO;
	}
	json_decref(root);
	return rc;
}

int whj_parse_boolean(const char *json, size_t len, bool *val)
{
	json_t *root, *b;
	int rc;

	root = load(json, len, &rc);
	if (!root)
		return rc;
	b = json_object_get(root, "boolean");
	if (json_is_boolean(b))
		*val = json_is_true(b);
	else
		rc = -EPROTO;
	json_decref(root);
	return rc;
}

int whj_parse_token(const char *json, size_t len, char *out, size_t outsz)
{
	json_t *root, *t, *u;
	const char *v;
	size_t n;
	int rc;

	if (outsz)
		out[0] = '\0';
	root = load(json, len, &rc);
	if (!root)
		return rc;
	t = json_object_get(root, "Token");
	u = json_is_object(t) ? json_object_get(t, "urlString") : NULL;
	rc = -EPROTO;
	if (json_is_string(u)) {
		v = json_string_value(u);
		n = strspn(
			v,
			"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			"0123456789-_");
		if (n && !v[n] && n < outsz && n <= WHJ_TOKEN_MAX) {
			memcpy(out, v, n + 1);
			rc = 0;
		}
	}
	json_decref(root);
	return rc;
}

int whj_parse_long(const char *json, size_t len, int64_t *val)
{
	json_t *root, *b;
	int rc;

	root = load(json, len, &rc);
	if (!root)
		return rc;
	b = json_object_get(root, "long");
	if (json_is_integer(b))
		*val = (int64_t)json_integer_value(b);
	else
		rc = -EPROTO;
	json_decref(root);
	return rc;
}

static void copy_clean(char *dst, size_t sz, const char *src)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < sz; i++) {
		unsigned char c = (unsigned char)src[i];

		dst[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	dst[i] = '\0';
}

int whj_parse_error(const char *json, size_t len, struct whj_error *out)
{
	json_t *root, *re, *ex, *msg;
	int rc;

	memset(out, 0, sizeof(*out));
	root = load(json, len, &rc);
	if (!root)
		return rc == -EFBIG ? -EPROTO : rc;
	re = json_object_get(root, "RemoteException");
	ex = json_is_object(re) ? json_object_get(re, "exception") : NULL;
	msg = json_is_object(re) ? json_object_get(re, "message") : NULL;
	if (!json_is_string(ex)) {
		rc = -EPROTO;
	} else {
		copy_clean(out->exception, sizeof(out->exception),
			   json_string_value(ex));
		if (json_is_string(msg))
			copy_clean(out->message, sizeof(out->message),
				   json_string_value(msg));
	}
	json_decref(root);
	return rc;
}

/* The one table of RemoteException names (README "HDFS"). */
static const struct {
	const char *name;
	int err;
	unsigned flags;
} exc_table[] = {
	{"FileNotFoundException", -ENOENT, 0},
	{"AccessControlException", -EACCES, 0},
	{"SecurityException", -EACCES, 0},
	{"AuthenticationException", -EACCES, 0},
	{"InvalidToken", -EACCES, 0},
	{"StandbyException", -EAGAIN, WHJ_FAILOVER},
	{"ObserverRetryOnActiveException", -EAGAIN, WHJ_FAILOVER},
	{"RetriableException", -EAGAIN, WHJ_RETRY},
	{"SafeModeException", -EAGAIN, WHJ_RETRY},
	{"PathIsNotEmptyDirectoryException", -ENOTEMPTY, 0},
	{"FileAlreadyExistsException", -EEXIST, 0},
	{"ParentNotDirectoryException", -ENOTDIR, 0},
	{"IllegalArgumentException", -EINVAL, 0},
	{"InvalidPathException", -EINVAL, 0},
	{"UnsupportedOperationException", -ENOSYS, 0},
	{"QuotaExceededException", -EDQUOT, 0},
	{"NSQuotaExceededException", -EDQUOT, 0},
	{"DSQuotaExceededException", -EDQUOT, 0},
};

int whj_exception_errno(const char *exception, unsigned *flags)
{
	if (flags)
		*flags = 0;
	if (!exception || !*exception)
		return 0;
	for (size_t i = 0; i < sizeof(exc_table) / sizeof(exc_table[0]); i++)
		if (!strcmp(exc_table[i].name, exception)) {
			if (flags)
				*flags = exc_table[i].flags;
			return exc_table[i].err;
		}
	return 0;
}
