/*
 * imapdel — rm of IMap WAL regions.  See imapdel.h.
 */
#include "policy/imapdel.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "policy/audit.h"
#include "policy/imapsum.h"

/* "/imap/<cluster>/<map>/<rest>": 0 and the parts, else -EINVAL. */
static int split(const char *path, char *mapdir, size_t mapsz, char *region,
		 size_t regsz, const char **rest)
{
	const char *p, *c, *m, *r;

	if (strncmp(path, "/imap/", 6) != 0)
		return -EINVAL;
	p = path + 6;
	c = strchr(p, '/');
	if (!c || c == p)
		return -EINVAL;
	m = strchr(c + 1, '/');
	if (!m || m == c + 1 || !m[1])
		return -EINVAL;
	r = strchr(m + 1, '/');
	if ((size_t)(m - p) >= mapsz)
		return -ENAMETOOLONG;
	memcpy(mapdir, p, (size_t)(m - p));
	mapdir[m - p] = '\0';
	if (!r)
		r = m + 1 + strlen(m + 1);
	if ((size_t)(r - m - 1) >= regsz)
		return -ENAMETOOLONG;
	memcpy(region, m + 1, (size_t)(r - m - 1));
	region[r - m - 1] = '\0';
	*rest = *r ? r + 1 : r;
	return 0;
}

/* "/imap/wal/<name>-<partition>.wal": a partition file of the documented
 * layout (README "Layouts"), decided as a region of its own. */
static bool is_doc_path(const char *path)
{
	return strncmp(path, "/imap/wal/", 10) == 0 &&
	       imapsum_doc_partition(path + 10, NULL);
}

bool imapdel_is_region_path(const char *path)
{
	char mapdir[2048], region[256];
	const char *rest;

	return is_doc_path(path) || split(path, mapdir, sizeof(mapdir), region,
					  sizeof(region), &rest) == 0;
}

enum region_engine imapdel_engine(struct stfs *fs, unsigned max_age_ms)
{
	struct engine_snap *snap;
	enum region_engine e;

	if (!fs->engine)
		return RE_UNKNOWN; /* nobody to ask */
	snap = stfs_engine(fs, max_age_ms ? max_age_ms : 1);
	if (!snap)
		return RE_UNKNOWN;
	/* only a refused connection says the members are stopped; a timeout
	 * or an error page may come from a running engine */
	e = !snap->err			 ? RE_UP
	    : snap->err == -ECONNREFUSED ? RE_STOPPED
					 : RE_UNKNOWN;
	engine_snap_put(snap);
	return e;
}

/* the same counters and audit trail as checkpoint deletions */
static void audit_region(struct stfs *fs, const struct caller *c,
			 const char *op, const char *path, const char *object,
			 const char *rule, int err)
{
	delete_audit(fs, c, op, path, object, "-", "engine", 0, rule, err);
}

/* What rm decides from: the mount, the caller, a fresh engine answer. */
static struct imapsum_opts rm_opts(struct stfs *fs, const struct caller *c)
{
	struct imapsum_opts o = {
		.grace_ns = (int64_t)fs->conf.imap_grace_s * 1000000000,
		.ro = fs->conf.ro,
		.caller_denied = !delete_caller_allowed(fs, c),
	};

	o.engine = imapdel_engine(fs, 1); /* a fresh answer */
	return o;
}

/* Decide for the region of `path`; 0 and *res, or -errno (no region). */
static int decide(struct stfs *fs, const struct caller *c, const char *path,
		  char *mapdir, size_t mapsz, const char **rest,
		  struct rule_result *res)
{
	char region[256];
	struct imapsum_opts o;
	int rc = split(path, mapdir, mapsz, region, sizeof(region), rest);

	if (rc)
		return rc;
	if (!fs->imap)
		return -ENOENT;
	o = rm_opts(fs, c);
	return imapsum_region_decide(fs->imap, mapdir, region, &o, res);
}

/* Remove WAL file `key` (mount path `path`) if `res` allows; audited. */
static int unlink_as_decided(struct stfs *fs, const struct caller *c,
			     const char *path, const char *key,
			     const struct rule_result *res)
{
	int rc;

	if (res->err) {
		audit_region(fs, c, "unlink", path, key, res->rule, res->err);
		return -res->err;
	}
	rc = be_remove(fs->imap, key);
	audit_region(fs, c, "unlink", path, key, "", rc < 0 ? -rc : 0);
	return rc;
}

/* unlink of a documented-layout partition file: the same rule, each file
 * a region of its map's partitions. */
static int doc_unlink(struct stfs *fs, const struct caller *c, const char *path)
{
	const char *key = path + 6; /* wal/<file> */
	struct imapsum_opts o = rm_opts(fs, c);
	struct rule_result res;
	int rc = imapsum_doc_decide(fs->imap, "wal", path + 10, &o, &res);

	if (rc == -ENOENT) /* listed no more, or not a partition file */
		return -ENOENT;
	if (rc)
		return rc;
	return unlink_as_decided(fs, c, path, key, &res);
}

int imapdel_unlink(struct stfs *fs, const struct caller *c, const char *path)
{
	char mapdir[2048], key[4096];
	const char *rest;
	struct rule_result res;
	struct be_attr a;
	size_t n;
	int rc;

	if (!fs->imap)
		return -ENOENT;
	if (is_doc_path(path))
		return doc_unlink(fs, c, path);
	if (snprintf(key, sizeof(key), "%s", path + 6) >= (int)sizeof(key))
		return -ENAMETOOLONG;
	rc = be_stat(fs->imap, key, &a);
	if (rc)
		return rc;
	if (a.type != BE_FILE)
		return -EISDIR;
	n = strlen(key);
	rc = decide(fs, c, path, mapdir, sizeof(mapdir), &rest, &res);
	if (rc == -ENOENT || rc == -EINVAL || n < 7 ||
	    strcmp(key + n - 7, "wal.txt") != 0) {
		/* not a WAL file of a region the engine reads: stfs does not
		 * remove what it cannot judge */
		res = (struct rule_result){.err = EPERM, .rule = "W1"};
		rc = 0;
	}
	if (rc)
		return rc;
	return unlink_as_decided(fs, c, path, key, &res);
}

int imapdel_rmdir(struct stfs *fs, const struct caller *c, const char *path)
{
	char mapdir[2048];
	const char *rest;
	struct rule_result res;
	const char *key = path + 6;
	int rc;

	if (is_doc_path(path))
		return -ENOTDIR; /* a partition file */
	rc = decide(fs, c, path, mapdir, sizeof(mapdir), &rest, &res);

	if (rc == -ENOENT && fs->imap) {
		/* no WAL file left (rm -r removed them): an empty directory,
		 * which holds no record and no file a member appends to */
		struct region_input in = {
			.ro = fs->conf.ro,
			.caller_allowed = delete_caller_allowed(fs, c),
		};
		struct be_attr a;

		if (be_stat(fs->imap, key, &a) != 0 || a.type != BE_DIR)
			return -ENOENT;
		in.engine = imapdel_engine(fs, 1);
		rules_decide_region(&in, &res);
		rc = 0;
	}
	if (rc)
		return rc == -EINVAL ? -EPERM : rc;
	if (res.err) {
		audit_region(fs, c, "rmdir", path, key, res.rule, res.err);
		return -res.err;
	}
	rc = be_rmdir(fs->imap, key);
	audit_region(fs, c, "rmdir", path, key, "", rc < 0 ? -rc : 0);
	return rc;
}
