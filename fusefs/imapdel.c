/*
 * imapdel — rm of IMap WAL regions.  See imapdel.h.
 */
#include "imapdel.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "imapsum.h"

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

bool imapdel_is_region_path(const char *path)
{
	char mapdir[2048], region[256];
	const char *rest;

	return split(path, mapdir, sizeof(mapdir), region, sizeof(region),
		     &rest) == 0;
}

enum region_engine imapdel_engine(const struct stfs *fs,
				  const struct engine_snap *snap)
{
	if (!fs->engine)
		return RE_UNKNOWN; /* nobody to ask */
	if (!snap->err)
		return RE_UP;
	/* only a refused connection says the members are stopped; a timeout
	 * or an error page may come from a running engine */
	return snap->err == -ECONNREFUSED ? RE_STOPPED : RE_UNKNOWN;
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void audit_region(struct stfs *fs, const struct caller *c,
			 const char *op, const char *path, const char *object,
			 const char *rule, int err)
{
	struct audit_rec r;
	char comm[64] = "";

	if (!fs->audit)
		return;
	audit_comm(c->pid, comm, sizeof(comm));
	memset(&r, 0, sizeof(r));
	r.time_ms = wall_ms();
	r.uid = c->uid;
	r.pid = c->pid;
	r.comm = comm;
	r.op = op;
	r.path = path;
	r.object = object;
	r.state = "-";
	r.state_source = "engine";
	r.rule = rule;
	r.err = err;
	audit_record(fs->audit, &r);
}

/* Decide for the region of `path`; 0 and *res, or -errno (no region). */
static int decide(struct stfs *fs, const struct caller *c, const char *path,
		  char *mapdir, size_t mapsz, const char **rest,
		  struct rule_result *res)
{
	char region[256];
	struct engine_snap *snap;
	struct imapsum_opts o = {
		.grace_ns = (int64_t)fs->conf.imap_grace_s * 1000000000,
		.ro = fs->conf.ro,
		.caller_denied = !delete_caller_allowed(fs, c),
	};
	int rc = split(path, mapdir, mapsz, region, sizeof(region), rest);

	if (rc)
		return rc;
	if (!fs->imap)
		return -ENOENT;
	snap = stfs_engine(fs, 0); /* a fresh answer */
	if (!snap)
		return -ENOMEM;
	o.engine = imapdel_engine(fs, snap);
	engine_snap_put(snap);
	return imapsum_region_decide(fs->imap, mapdir, region, &o, res);
}

int imapdel_unlink(struct stfs *fs, const struct caller *c, const char *path)
{
	char mapdir[2048], key[4096];
	const char *rest;
	struct rule_result res;
	struct be_attr a;
	int rc = decide(fs, c, path, mapdir, sizeof(mapdir), &rest, &res);

	if (rc)
		return rc == -EINVAL ? -EPERM : rc;
	if (!*rest)
		return -EISDIR;
	if (snprintf(key, sizeof(key), "%s", path + 6) >= (int)sizeof(key))
		return -ENAMETOOLONG;
	rc = be_stat(fs->imap, key, &a);
	if (rc)
		return rc;
	if (a.type != BE_FILE)
		return -EISDIR;
	if (res.err) {
		audit_region(fs, c, "unlink", path, key, res.rule, res.err);
		return -res.err;
	}
	rc = be_remove(fs->imap, key);
	audit_region(fs, c, "unlink", path, key, "", rc < 0 ? -rc : 0);
	return rc;
}

int imapdel_rmdir(struct stfs *fs, const struct caller *c, const char *path)
{
	char mapdir[2048];
	const char *rest;
	struct rule_result res;
	const char *key = path + 6;
	int rc = decide(fs, c, path, mapdir, sizeof(mapdir), &rest, &res);

	if (rc == -ENOENT && fs->imap) {
		struct be_attr a;

		/* no WAL file left (rm -r removed them): an empty directory
		 * goes under the same caller and mount rules */
		if (be_stat(fs->imap, key, &a) != 0 || a.type != BE_DIR)
			return -ENOENT;
		if (fs->conf.ro)
			res = (struct rule_result){.err = EROFS, .rule = "W5"};
		else if (!delete_caller_allowed(fs, c))
			res = (struct rule_result){.err = EACCES, .rule = "W4"};
		else
			res = (struct rule_result){.err = 0, .rule = ""};
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
