/*
 * view.c — taking a view, and the jobs as both sources see them.
 */
#include "view/view.h"

#include <errno.h>
#include <string.h>

#include "util/jobid.h"
#include "util/log.h"

void view_open(struct stfs *fs, struct view *v)
{
	v->fs = fs;
	v->cat = stfs_catalog(fs, 0);
	v->snap = stfs_engine(fs, 0);
	v->now_ms = now_ms();
	v->caller_allowed = NULL;
}

void view_close(struct view *v)
{
	catalog_put(v->cat);
	engine_snap_put(v->snap);
	v->cat = NULL;
	v->snap = NULL;
}

static int64_t ns_to_s(int64_t ns)
{
	return ns / 1000000000;
}

static void job_fill(const struct view *v, const char *id,
		     const struct cat_job *cj, const struct engine_job *ej,
		     struct job_view *jv)
{
	int64_t m = 0;

	memset(jv, 0, sizeof(*jv));
	jv->id = id;
	jv->cj = cj;
	jv->ej = ej;
	if (ej) {
		jv->state = ej->state;
		/* read only: a release of a job seen running again is voided
		 * where the engine's answer arrives (delete_watch_engine) */
		jv->stale = v->snap->err != 0;
	} else if (v->snap->err != 0 || !cj) {
		jv->state = JS_UNKNOWN;
	} else {
		int64_t age_ms = v->now_ms - cj->newest_mtime_ns / 1000000;

		jv->state = age_ms >= (int64_t)v->fs->conf.orphan_grace_s * 1000
				    ? JS_ORPHAN
				    : JS_UNKNOWN;
	}
	if (cj && ns_to_s(cj->newest_mtime_ns) > m)
		m = ns_to_s(cj->newest_mtime_ns);
	if (ej && ej->finish_s > m)
		m = ej->finish_s;
	if (ej && ej->create_s > m)
		m = ej->create_s;
	jv->mtime_s = m ? m : v->fs->start_ms / 1000;
}

int view_job(const struct view *v, const char *id, struct job_view *out)
{
	const struct cat_job *cj = catalog_find(v->cat, id);
	const struct engine_job *ej = engine_snap_find(v->snap, id);

	if (!cj && !ej)
		return -ENOENT;
	job_fill(v, cj ? cj->id : ej->id, cj, ej, out);
	return 0;
}

int view_each_job(const struct view *v,
		  int (*fn)(void *cookie, const struct job_view *jv),
		  void *cookie)
{
	size_t i = 0, k = 0;
	const struct catalog *c = v->cat;
	const struct engine_snap *s = v->snap;
	struct job_view jv;

	while (i < c->n_jobs || k < s->n_jobs) {
		const struct cat_job *cj = NULL;
		const struct engine_job *ej = NULL;
		int cmp;

		if (i >= c->n_jobs)
			cmp = 1;
		else if (k >= s->n_jobs)
			cmp = -1;
		else
			cmp = jobid_cmp(c->jobs[i].id, s->jobs[k].id);
		if (cmp <= 0)
			cj = &c->jobs[i++];
		if (cmp >= 0)
			ej = &s->jobs[k++];
		job_fill(v, cj ? cj->id : ej->id, cj, ej, &jv);
		if (fn(cookie, &jv))
			break;
	}
	return 0;
}
