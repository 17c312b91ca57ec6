#include "view/render.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "model/ckinfo.h"
#include "policy/delete.h"
#include "backends/http.h"
#include "model/ckinfo.h"
#include "model/protostuff.h"
#include "policy/release.h"
#include "policy/rules.h"
#include "util/pcache.h"
#include "util/textesc.h"

/* how much of a job name and of the first line of an engine error status
 * shows (escaped; the whole text is in job.json) */
#define NAME_MAX_SHOWN	1024
#define ERROR_MAX_SHOWN 512

void render_time_ms(int64_t ms, char *out, size_t outsz)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms <= 0 || !gmtime_r(&t, &tm)) {
		snprintf(out, outsz, "-");
		return;
	}
	strftime(out, outsz, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

void render_bytes(uint64_t n, char *out, size_t outsz)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double d = (double)n;
	int u = 0;

	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, outsz, "%" PRIu64 " B", n);
	else
		snprintf(out, outsz, "%.1f %s", d, unit[u]);
}

bool render_job_released(struct stfs *fs, const char *id)
{
	return fs->rel && release_is_released(fs->rel, id);
}

/*
 * The verdict of `rm -r jobs/<id>` for a permitted caller: computed by
 * delete_assess(), from the same inputs an unlink decides on (README
 * "Deleting": `deletable` tells in advance what `rm -r` would do).
 */
void render_verdict(struct view *v, const struct job_view *jv,
		    struct verdict *out)
{
	struct delete_assessment a;

	delete_assess(v->fs, jv->id, true, &a);
	out->err = a.verdict.err;
	out->rule = a.verdict.rule;
	snprintf(out->reason, sizeof(out->reason), "%s", a.verdict.reason);
}

static void verdict_line(const struct verdict *vd, char *out, size_t outsz)
{
	if (vd->err == 0)
		snprintf(out, outsz, "yes");
	else
		snprintf(out, outsz, "no %s %s %s", strerrorname_np(vd->err),
			 vd->rule, vd->reason);
}

static const char *source_name(const struct job_view *jv)
{
	if (jv->cj && jv->ej)
		return "engine and storage";
	if (jv->ej)
		return "engine only (no checkpoint storage)";
	return "storage only";
}

static const char *layout_name(const struct cat_job *cj)
{
	bool real = false, doc = false;

	for (size_t i = 0; i < cj->n_pipes; i++)
		for (size_t j = 0; j < cj->pipes[i].n_ckpts; j++) {
			if (cj->pipes[i].ckpts[j].doc)
				doc = true;
			else
				real = true;
		}
	if (real && doc)
		return "real and documented";
	if (doc || cj->n_sp)
		return "documented";
	return real ? "real" : "-";
}

static void line_time_s(struct buf *out, const char *label, int64_t s)
{
	char t[64];

	if (s <= 0)
		return;
	render_time_ms(s * 1000, t, sizeof(t));
	buf_printf(out, "%-12s%s\n", label, t);
}

/*
 * "label      value\n" with a value from outside (a job name, an engine
 * message, an object name) escaped (textesc.h): it can neither forge a
 * line of this file nor drive the terminal of whoever cats it.  At most
 * `max` bytes of it, up to its first newline when `first_line`.
 */
static int line_ext(struct buf *out, const char *label, const char *v,
		    size_t max, bool first_line)
{
	size_t n = first_line ? strcspn(v, "\n") : strlen(v);
	int rc;

	rc = buf_printf(out, "%-12s", label);
	if (!rc)
		rc = textesc_append(out, v, n < max ? n : max, 0);
	if (!rc && n > max)
		rc = buf_puts(out, " ...");
	return rc ? rc : buf_puts(out, "\n");
}

/* " (why)" after the state: what the engine said or could not say */
static void state_note(struct view *v, const struct job_view *jv,
		       struct buf *out)
{
	char t[64];

	if (jv->stale) {
		render_time_ms(v->snap->data_ms, t, sizeof(t));
		buf_printf(out, " (last known, as of %s; engine unreachable)",
			   t);
	} else if (jv->state == JS_ORPHAN) {
		buf_printf(out, " (the engine knows no such job)");
	} else if (jv->state != JS_UNKNOWN) {
		return;
	} else if (v->snap->err) {
		buf_puts(out, " (engine unreachable)");
	} else if (jv->ej && jv->ej->status_text) {
		buf_puts(out, " (the engine says \"");
		textesc_append(out, jv->ej->status_text,
			       strlen(jv->ej->status_text), TEXTESC_QUOTE);
		buf_puts(out, "\", a state stfs does not know)");
	} else if (jv->ej) {
		buf_puts(out, " (the engine gives the job no jobStatus)");
	} else {
		buf_puts(out, " (not known to the engine; younger than "
			      "orphan_grace)");
	}
}

/* a duration as "2.5s", "3m10s", "2h05m" */
static void render_dur_ms(int64_t ms, char *out, size_t n)
{
	if (ms < 0)
		snprintf(out, n, "-");
	else if (ms < 60000)
		snprintf(out, n, "%" PRId64 ".%" PRId64 "s", ms / 1000,
			 ms % 1000 / 100);
	else if (ms < 3600000)
		snprintf(out, n, "%" PRId64 "m%02" PRId64 "s", ms / 60000,
			 ms / 1000 % 60);
	else
		snprintf(out, n, "%" PRId64 "h%02" PRId64 "m", ms / 3600000,
			 ms / 60000 % 60);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* a finished checkpoint's write time: its newest real-layout object */
static int64_t ckpt_write_ms(const struct cat_ckpt *c)
{
	int64_t t = 0;

	for (size_t i = 0; i < c->n_objs; i++) {
		const struct cat_obj *o = c->objs[i];

		if (o->kind == CAT_REAL && !o->rn.tmp && !o->rn.crc &&
		    o->rn.write_ts > t)
			t = o->rn.write_ts;
	}
	return t;
}

/*
 * What storage tells of each pipeline's checkpointing (README "The
 * tree"): the cadence (median time between the stored checkpoints) beside
 * the job's checkpoint.interval, the newest one's time, and the gaps in the
 * stored series (steps over twice the cadence).  It depends on storage
 * alone, not on the clock; whether a running job is late is the alert
 * SeaTunnelCheckpointStale's question (README "Prometheus").  The engine's
 * own view, where it has one, follows in render_monitor().
 */
static void render_cadence(const struct job_view *jv, struct buf *out)
{
	const struct cat_job *cj = jv->cj;
	int64_t ivl = jv->ej ? jv->ej->ckpt_interval_ms : 0;
	char every[24], iv[24], t[64];

	buf_printf(out, "\n%-10s %-10s %-10s %-24s %s\n", "pipeline", "every",
		   "interval", "newest written", "gaps");
	for (size_t i = 0; i < cj->n_pipes; i++) {
		const struct cat_pipe *p = &cj->pipes[i];
		int64_t *ts = calloc(p->n_ckpts ? p->n_ckpts : 1, sizeof(*ts));
		int64_t *st = calloc(p->n_ckpts ? p->n_ckpts : 1, sizeof(*st));
		size_t n = 0, gaps = 0;
		int64_t med = -1;

		if (!ts || !st) {
			free(ts);
			free(st);
			return;
		}
		for (size_t k = 0; k < p->n_ckpts; k++) {
			int64_t w = ckpt_write_ms(&p->ckpts[k]);

			if (w > 0)
				ts[n++] = w;
		}
		if (n) {
			qsort(ts, n, sizeof(*ts), cmp_i64);
			for (size_t k = 0; k + 1 < n; k++)
				st[k] = ts[k + 1] - ts[k];
			if (n > 1) {
				qsort(st, n - 1, sizeof(*st), cmp_i64);
				med = st[(n - 1) / 2];
				for (size_t k = 0; k + 1 < n; k++)
					gaps += ts[k + 1] - ts[k] > 2 * med;
			}
			render_dur_ms(med, every, sizeof(every));
			render_dur_ms(ivl > 0 ? ivl : -1, iv, sizeof(iv));
			render_time_ms(ts[n - 1], t, sizeof(t));
			buf_printf(out, "%-10d %-10s %-10s %-24s %zu\n", p->id,
				   every, iv, t, gaps);
		}
		free(ts);
		free(st);
	}
}

static int64_t jint(json_t *o, const char *k)
{
	json_t *x = json_object_get(o, k);

	if (json_is_integer(x))
		return json_integer_value(x);
	if (json_is_string(x))
		return strtoll(json_string_value(x), NULL, 10);
	return -1;
}

/*
 * The engine's checkpoint monitor of a running job (SeaTunnel 2.3.13+,
 * /jobs/checkpoints/<id>): per pipeline the counts, the success rate, the
 * last completed checkpoint's duration and the last failure's reason.
 * Nothing when the engine has no monitor (2.3.12 and older).
 */
static void render_monitor(struct view *v, const struct job_view *jv,
			   struct buf *out)
{
	struct buf raw;
	json_t *root, *pipes, *p;
	size_t i;

	if (!v->fs->engine || jv->state != JS_RUNNING)
		return;
	buf_init(&raw, (size_t)4 << 20);
	if (engine_ckpt_monitor(v->fs->engine, jv->id, &raw) || !raw.data) {
		buf_release(&raw);
		return;
	}
	root = json_loadb(raw.data, raw.len, 0, NULL);
	buf_release(&raw);
	pipes = json_object_get(root, "pipelines");
	if (!json_is_array(pipes) || !json_array_size(pipes)) {
		json_decref(root);
		return;
	}
	buf_printf(out, "\n%-10s %-9s %-9s %-6s %-11s %-8s %-9s %s\n", "engine",
		   "triggered", "completed", "failed", "in_progress", "success",
		   "duration", "last failure");
	json_array_foreach (pipes, i, p) {
		json_t *c = json_object_get(p, "counts");
		int64_t done = jint(c, "completed"), bad = jint(c, "failed");
		char rate[16] = "-", dur[24];
		const char *why = json_string_value(json_object_get(
			json_object_get(p, "latestFailed"), "failureReason"));

		if (done >= 0 && bad >= 0 && done + bad > 0)
			snprintf(rate, sizeof(rate), "%.1f%%",
				 100.0 * (double)done / (double)(done + bad));
		render_dur_ms(jint(json_object_get(p, "latestCompleted"),
				   "durationMillis"),
			      dur, sizeof(dur));
		buf_printf(out,
			   "%-10" PRId64 " %-9" PRId64 " %-9" PRId64
			   " %-6" PRId64 " %-11" PRId64 " %-8s %-9s ",
			   jint(p, "pipelineId"), jint(c, "triggered"), done,
			   bad, jint(c, "inProgress"), rate, dur);
		/* the engine's words: escaped, one line */
		textesc_puts(out, why && *why ? why : "-");
		buf_puts(out, "\n");
	}
	json_decref(root);
}

int render_job_status(struct view *v, const struct job_view *jv,
		      struct buf *out)
{
	const struct cat_job *cj = jv->cj;
	const struct engine_job *ej = jv->ej;
	struct verdict vd;
	char t[64], b[32], vl[256];

	buf_printf(out, "%-12s%s\n", "job", jv->id);
	if (ej && ej->name)
		line_ext(out, "name", ej->name, NAME_MAX_SHOWN, false);
	buf_printf(out, "%-12s%s", "state", job_state_name(jv->state));
	state_note(v, jv, out);
	buf_puts(out, "\n");
	buf_printf(out, "%-12s%s\n", "source", source_name(jv));
	if (ej) {
		line_time_s(out, "created", ej->create_s);
		line_time_s(out, "finished", ej->finish_s);
		if (ej->error_msg)
			line_ext(out, "error", ej->error_msg, ERROR_MAX_SHOWN,
				 true);
	}
	if (cj) {
		render_bytes(cj->bytes, b, sizeof(b));
		buf_printf(out,
			   "%-12s%zu objects, %s (%" PRIu64
			   " bytes), %zu in flight (.sertmp)\n",
			   "storage", cj->n_objs, b, cj->bytes, cj->n_tmp);
		buf_printf(out, "%-12s%s\n", "layout", layout_name(cj));
		if (cj->newest_ckpt_ms)
			render_time_ms(cj->newest_ckpt_ms, t, sizeof(t));
		buf_printf(out, "%-12s%s\n", "newest",
			   cj->newest_ckpt_ms ? t : "-");
		if (cj->n_sp)
			buf_printf(out,
				   "%-12s%zu objects (documented layout)\n",
				   "savepoints", cj->n_sp);
		if (cj->n_strays)
			buf_printf(out, "%-12s%zu objects (see other/)\n",
				   "unrecognised", cj->n_strays);
		buf_printf(out, "%-12s%s\n", "released",
			   render_job_released(v->fs, jv->id) ? "yes" : "no");
		buf_printf(out, "\n%-10s %-11s %-8s %-36s %s\n", "pipeline",
			   "checkpoints", "newest", "restore point", "bytes");
		for (size_t i = 0; i < cj->n_pipes; i++) {
			const struct cat_pipe *p = &cj->pipes[i];
			char range[48];
			struct buf rp; /* the restore point's name, escaped */

			buf_init(&rp, 4 * (size_t)PATH_MAX);
			if (textesc_puts(&rp,
					 p->restore ? p->restore->name : "-") ||
			    !rp.data)
				return -ENOMEM;
			if (p->n_ckpts)
				snprintf(range, sizeof(range), "%zu",
					 p->n_ckpts);
			else
				snprintf(range, sizeof(range), "0");
			buf_printf(
				out,
				"%-10d %-11s %-8" PRId64 " %-36s %" PRIu64 "\n",
				p->id, range,
				p->n_ckpts ? p->ckpts[p->n_ckpts - 1].id : -1,
				rp.data, p->bytes);
			buf_release(&rp);
		}
		render_cadence(jv, out);
	} else {
		buf_printf(out, "%-12s%s\n", "storage",
			   "nothing under the checkpoint namespace");
	}
	render_monitor(v, jv, out);
	render_verdict(v, jv, &vd);
	verdict_line(&vd, vl, sizeof(vl));
	return buf_printf(out, "\n%-12s%s\n", "deletable", vl);
}

/* "<label> <value>\n" with room for the longer labels of `info` */
#define INFO_FMT "%-22s "

static void info_time(struct buf *out, const char *label, int64_t ms)
{
	char t[64];

	render_time_ms(ms, t, sizeof(t));
	buf_printf(out, INFO_FMT "%s\n", label, ms > 0 ? t : "-");
}

/*
 * The info of an object that does not decode (README "Checkpoint info"):
 * the ids of its name, the listing's size, and why.  An answer, not EIO: a
 * stat of `info` (the kernel's lookup before each unlink of an rm -r) then
 * succeeds as the listing said it would.
 */
static int info_undecodable(const struct job_view *jv, int32_t pipe_id,
			    const struct cat_ckpt *c, const struct cat_obj *o,
			    struct buf *out)
{
	buf_printf(out, INFO_FMT "%s\n", "job", jv->id);
	buf_printf(out, INFO_FMT "%" PRId32 "\n", "pipeline", pipe_id);
	buf_printf(out, INFO_FMT "%" PRId64 "\n", "checkpoint", c->id);
	buf_printf(out, INFO_FMT, "object");
	textesc_append(out, o->name, strlen(o->name), 0);
	buf_puts(out, "\n");
	buf_printf(out, INFO_FMT "%s\n", "restore_point",
		   c->restore_point ? "yes" : "no");
	buf_printf(out, INFO_FMT "%" PRIu64 "\n", "size", o->size);
	return buf_printf(out, INFO_FMT "%s\n", "error",
			  o->size ? "the object does not decode as a "
				    "checkpoint (PipelineState)"
				  : "the object does not decode: it is empty");
}

int render_ckpt_info(struct view *v, const struct job_view *jv, int32_t pipe_id,
		     const struct cat_ckpt *c, struct buf *out)
{
	static const char prefix[] = "ActionStateKey - ";
	const struct cat_obj *o = ckinfo_ckpt_object(c);
	struct pstuff_summary sum;
	const struct pstuff_summary *s = &sum;
	const struct pstuff_ckpt *k;
	uint64_t bytes = 0, size = 0, acked = 0;
	char label[64];
	int rc;

	if (!o)
		return -ENOENT;
	rc = ckinfo_summary(v->fs->ck, STFS_CK_SRC(v->fs), o, &sum);
	if (rc == -EPROTO)
		return info_undecodable(jv, pipe_id, c, o, out);
	if (rc)
		return rc;
	k = &s->ck;
	for (size_t i = 0; i < s->n_actions && i < PSTUFF_SUM_MAX_ENT; i++)
		bytes += s->actions[i].state_bytes;
	for (size_t i = 0; i < s->n_stats && i < PSTUFF_SUM_MAX_ENT; i++) {
		size += s->stats[i].state_size;
		acked += (uint64_t)(s->stats[i].acked > 0 ? s->stats[i].acked
							  : 0);
	}
	/* the ids as the file holds them (the path's come from its name) */
	buf_printf(out, INFO_FMT, "job");
	textesc_append(out, k->job_id, strlen(k->job_id), 0);
	buf_puts(out, "\n");
	buf_printf(out, INFO_FMT "%" PRId32 "\n", "pipeline", k->pipeline_id);
	buf_printf(out, INFO_FMT "%" PRId64 "\n", "checkpoint",
		   k->checkpoint_id);
	if (strcmp(k->job_id, jv->id) != 0 || k->pipeline_id != pipe_id ||
	    k->checkpoint_id != c->id)
		buf_printf(out, INFO_FMT "%s\n", "warning",
			   "the ids in the file differ from its name");
	buf_printf(out, INFO_FMT, "object");
	textesc_append(out, o->name, strlen(o->name), 0);
	buf_puts(out, "\n");
	buf_printf(out, INFO_FMT "%s\n", "type", ckpt_type_name(k->type));
	buf_printf(out, INFO_FMT "%s\n", "restore_point",
		   c->restore_point ? "yes" : "no");
	info_time(out, "triggered", k->trigger_ts);
	info_time(out, "completed", k->completed_ts);
	buf_printf(out, INFO_FMT "%" PRId64 "\n", "trigger_ms", k->trigger_ts);
	buf_printf(out, INFO_FMT "%" PRId64 "\n", "completed_ms",
		   k->completed_ts);
	buf_printf(out, INFO_FMT "%" PRId64 "\n", "duration_ms",
		   k->completed_ts - k->trigger_ts);
	buf_printf(out, INFO_FMT "%" PRIu64 "\n", "size", o->size);
	buf_printf(out, INFO_FMT "%zu\n", "actions", s->n_actions);
	buf_printf(out, INFO_FMT "%" PRIu64 "\n", "state_bytes", bytes);
	buf_printf(out, INFO_FMT "%zu\n", "tasks", s->n_stats);
	buf_printf(out, INFO_FMT "%" PRIu64 "\n", "acknowledged", acked);
	buf_printf(out, INFO_FMT "%" PRIu64 "\n", "state_size", size);
	for (size_t i = 0; i < s->n_actions && i < PSTUFF_SUM_MAX_ENT; i++) {
		const struct pstuff_action *a = &s->actions[i];
		const char *name = a->name;

		if (strncmp(name, prefix, sizeof(prefix) - 1) == 0)
			name += sizeof(prefix) - 1;
		snprintf(label, sizeof(label), "action.%zu.name", i);
		buf_printf(out, INFO_FMT, label);
		textesc_append(out, name, strlen(name), 0);
		buf_puts(out, "\n");
		snprintf(label, sizeof(label), "action.%zu.parallelism", i);
		buf_printf(out, INFO_FMT "%" PRId32 "\n", label,
			   a->parallelism);
		snprintf(label, sizeof(label), "action.%zu.subtasks", i);
		buf_printf(out, INFO_FMT "%" PRIu32 "\n", label, a->subtasks);
		snprintf(label, sizeof(label), "action.%zu.coordinator", i);
		buf_printf(out, INFO_FMT "%s\n", label,
			   a->coordinator ? "yes" : "no");
		snprintf(label, sizeof(label), "action.%zu.state_bytes", i);
		buf_printf(out, INFO_FMT "%" PRIu64 "\n", label,
			   a->state_bytes);
	}
	for (size_t i = 0; i < s->n_stats && i < PSTUFF_SUM_MAX_ENT; i++) {
		const struct pstuff_taskstat *t = &s->stats[i];

		snprintf(label, sizeof(label), "task.%zu.vertex", i);
		buf_printf(out, INFO_FMT "%" PRId64 "\n", label, t->vertex_id);
		snprintf(label, sizeof(label), "task.%zu.acknowledged", i);
		buf_printf(out, INFO_FMT "%" PRId32 "\n", label, t->acked);
		snprintf(label, sizeof(label), "task.%zu.subtasks", i);
		buf_printf(out, INFO_FMT "%" PRIu32 "\n", label, t->subtasks);
		snprintf(label, sizeof(label), "task.%zu.state_size", i);
		buf_printf(out, INFO_FMT "%" PRIu64 "\n", label, t->state_size);
	}
	if (s->n_actions > PSTUFF_SUM_MAX_ENT ||
	    s->n_stats > PSTUFF_SUM_MAX_ENT)
		buf_printf(out, INFO_FMT "only the first %d shown\n", "note",
			   PSTUFF_SUM_MAX_ENT);
	pstuff_summary_free(&sum);
	return 0;
}

int render_pipe_status(struct view *v, const struct job_view *jv,
		       int32_t pipe_id, const struct cat_pipe *p,
		       struct buf *out)
{
	char t[64];

	buf_printf(out, "%-12s%s\n", "job", jv->id);
	buf_printf(out, "%-12s%d\n", "pipeline", pipe_id);
	buf_printf(out, "%-12s%s (job state)\n", "state",
		   job_state_name(jv->state));
	if (!p || p->n_ckpts == 0)
		return buf_printf(out, "%-12s%s\n", "checkpoints", "none");
	buf_printf(out, "%-12s%zu\n", "checkpoints", p->n_ckpts);
	buf_printf(out, "%-12s%" PRId64 "\n", "restore", p->restore_ckpt);
	ckinfo_prefetch_pipe(v->fs->ck, STFS_CK_SRC(v->fs), p);
	buf_printf(out, "\n%-12s %-7s %-10s %-24s %-7s %-10s %-9s %s\n",
		   "checkpoint", "objects", "bytes", "written", "layout",
		   "type", "duration", "role");
	for (size_t i = 0; i < p->n_ckpts; i++) {
		const struct cat_ckpt *c = &p->ckpts[i];
		const struct cat_obj *o = ckinfo_ckpt_object(c);
		struct pstuff_summary sum;
		const struct pstuff_summary *s = NULL;
		char dur[32] = "-";
		char type[32] = "-";
		int64_t wts = 0;

		/* type and duration from the checkpoint's summary (the one
		 * `info` shows: decoded once per object version; prefetched
		 * above) */
		if (o &&
		    ckinfo_summary(v->fs->ck, STFS_CK_SRC(v->fs), o, &sum) == 0)
			s = &sum;
		if (s) {
			snprintf(dur, sizeof(dur), "%" PRId64 "ms",
				 s->ck.completed_ts - s->ck.trigger_ts);
			snprintf(type, sizeof(type), "%s",
				 ckpt_type_name(s->ck.type));
			pstuff_summary_free(&sum);
		}

		for (size_t j = 0; j < c->n_objs; j++)
			if (c->objs[j]->kind == CAT_REAL &&
			    c->objs[j]->rn.write_ts > wts)
				wts = c->objs[j]->rn.write_ts;
		render_time_ms(wts ? wts : c->newest_mtime_ns / 1000000, t,
			       sizeof(t));
		buf_printf(out,
			   "%-12" PRId64 " %-7zu %-10" PRIu64
			   " %-24s %-7s %-10s %-9s %s\n",
			   c->id, c->n_objs, c->bytes, t,
			   c->doc ? "doc" : "real", type, dur,
			   c->restore_point ? "restore point"
			   : c->only_tmp    ? "in flight"
					    : "superseded");
	}
	return 0;
}

int render_deletable(struct view *v, const struct job_view *jv,
		     bool caller_allowed, struct buf *out)
{
	static const struct {
		enum obj_class cls;
		const char *name;
	} lines[] = {
		{OC_SUPERSEDED, "superseded"},
		{OC_RESTORE_POINT, "restore_points"},
		{OC_SAVEPOINT, "savepoints"},
		{OC_INFLIGHT, "in_flight"},
		{OC_STRAY, "unrecognised"},
	};
	struct delete_assessment a;
	struct verdict vd;
	char line[256];

	delete_assess(v->fs, jv->id, caller_allowed, &a);
	vd.err = a.verdict.err;
	vd.rule = a.verdict.rule;
	snprintf(vd.reason, sizeof(vd.reason), "%s", a.verdict.reason);
	verdict_line(&vd, line, sizeof(line));
	buf_printf(out, "%s\n", line);
	for (size_t i = 0; i < sizeof(lines) / sizeof(*lines); i++) {
		const struct rule_result *r = &a.res[lines[i].cls];

		if (r->err)
			buf_printf(out, "%-15s %4zu no %s %s\n", lines[i].name,
				   a.cnt[lines[i].cls], strerrorname_np(r->err),
				   r->rule);
		else
			buf_printf(out, "%-15s %4zu yes%s\n", lines[i].name,
				   a.cnt[lines[i].cls],
				   a.merged && lines[i].cls == OC_SAVEPOINT
					   ? " (real-layout savepoints are "
					     "counted as superseded: same "
					     "verdict)"
					   : "");
	}
	return 0;
}

int render_restore(struct view *v, const struct job_view *jv, struct buf *out)
{
	const struct cat_job *cj = jv->cj;
	/* a release covers the job as it was when released (release.h) */
	bool rel = v->fs->rel && release_covers(v->fs->rel, jv->id,
						cj ? cj->newest_mtime_ns : 0,
						jv->ej ? jv->ej->finish_s : 0);

	buf_printf(out, "%s\n", rel ? "released" : "protected");
	for (size_t i = 0; cj && i < cj->n_pipes; i++) {
		const struct cat_pipe *p = &cj->pipes[i];

		if (p->restore)
			buf_printf(out,
				   "pipeline %d checkpoint %" PRId64 " %s\n",
				   p->id, p->restore_ckpt, p->restore->key);
	}
	return 0;
}

static void stat_line(struct buf *out, const char *name, const char *help,
		      const char *type, uint64_t v)
{
	buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n%s %" PRIu64 "\n", name,
		   help, name, type, name, v);
}

/* counters of struct stfs_counters shown as they are (README
 * "Prometheus"): the FUSE calls not above, the freshness ticker, the
 * kernel notifications */
#define STFS_N(field) offsetof(struct stfs_counters, field)
static const struct {
	const char *name, *help;
	size_t off;
} plain_counters[] = {
	{"stfs_fuse_lookup_total", "lookup calls.", STFS_N(lookup)},
	{"stfs_fuse_forget_total",
	 "Nodes forgotten by the kernel (forget and batch forget).",
	 STFS_N(forget)},
	{"stfs_fuse_open_total", "open calls.", STFS_N(open)},
	{"stfs_fuse_release_total", "release calls.", STFS_N(release)},
	{"stfs_fuse_opendir_total", "opendir calls.", STFS_N(opendir)},
	{"stfs_fuse_releasedir_total", "releasedir calls.", STFS_N(releasedir)},
	{"stfs_fuse_readlink_total", "readlink calls.", STFS_N(readlink)},
	{"stfs_fuse_getxattr_total", "getxattr calls.", STFS_N(getxattr)},
	{"stfs_fuse_listxattr_total", "listxattr calls.", STFS_N(listxattr)},
	{"stfs_fuse_statfs_total", "statfs calls.", STFS_N(statfs)},
	{"stfs_fuse_access_total", "access calls.", STFS_N(access)},
	{"stfs_fresh_ticks_total",
	 "Freshness ticks that asked the sources (idle ones do not count).",
	 STFS_N(fresh_ticks)},
	{"stfs_fresh_jobs_changed_total",
	 "Jobs a freshness tick found added, removed or changed.",
	 STFS_N(fresh_jobs_changed)},
	{"stfs_kernel_jobs_invalidated_total",
	 "Jobs invalidated in the kernel (each ticker change twice, "
	 "deletions and releases once).",
	 STFS_N(jobs_invalidated)},
	{"stfs_kernel_notifications_total",
	 "Invalidation notifications sent to the kernel.", STFS_N(notify_sent)},
	{"stfs_kernel_notifications_enoent_total",
	 "Notifications the kernel answered ENOENT (it held no such node or "
	 "name: normal).",
	 STFS_N(notify_enoent)},
	{"stfs_kernel_notifications_failed_total",
	 "Notifications that failed otherwise.", STFS_N(notify_failed)},
};
#undef STFS_N

int render_stats(struct view *v, struct buf *out)
{
	struct stfs *fs = v->fs;
	struct http_stats hs;
	const struct be_stats *bs = &fs->ckpt->stats;

	http_get_stats(&hs);
	stat_line(out, "stfs_fuse_getattr_total", "getattr calls.", "counter",
		  STFS_GET(fs, getattr));
	stat_line(out, "stfs_fuse_readdir_total", "readdir calls.", "counter",
		  STFS_GET(fs, readdir));
	stat_line(out, "stfs_fuse_read_total", "read calls.", "counter",
		  STFS_GET(fs, read));
	stat_line(out, "stfs_fuse_read_bytes_total", "Bytes returned by read.",
		  "counter", STFS_GET(fs, read_bytes));
	for (size_t i = 0; i < sizeof(plain_counters) / sizeof(*plain_counters);
	     i++) {
		const uint64_t *c =
			(const uint64_t *)(const void *)((const char *)&fs->n +
							 plain_counters[i].off);

		stat_line(out, plain_counters[i].name, plain_counters[i].help,
			  "counter", __atomic_load_n(c, __ATOMIC_RELAXED));
	}
	stat_line(out, "stfs_refused_mutations_total",
		  "Create/write/rename/chmod calls refused.", "counter",
		  STFS_GET(fs, refused_mutations));
	stat_line(out, "stfs_deletions_allowed_total", "Deletions done.",
		  "counter", STFS_GET(fs, deletions_allowed));
	stat_line(out, "stfs_deletions_refused_total", "Deletions refused.",
		  "counter", STFS_GET(fs, deletions_refused));
	stat_line(out, "stfs_catalog_builds_total",
		  "Listings of the checkpoint namespace.", "counter",
		  STFS_GET(fs, catalog_builds));
	stat_line(out, "stfs_catalog_errors_total",
		  "Failed listings of the checkpoint namespace.", "counter",
		  STFS_GET(fs, catalog_errors));
	stat_line(out, "stfs_pcache_hits_total", "Pseudo-file cache hits.",
		  "counter", STFS_GET(fs, pcache_hits));
	stat_line(out, "stfs_pcache_misses_total", "Pseudo-file renders.",
		  "counter", STFS_GET(fs, pcache_misses));
	stat_line(out, "stfs_live_renders_total",
		  "Renders of live pseudo-files (never cached).", "counter",
		  STFS_GET(fs, live_renders));
	stat_line(out, "stfs_backend_list_requests_total",
		  "Checkpoint backend list calls (pages).", "counter",
		  __atomic_load_n(&bs->lists, __ATOMIC_RELAXED));
	stat_line(out, "stfs_backend_stat_requests_total",
		  "Checkpoint backend stat calls.", "counter",
		  __atomic_load_n(&bs->stats, __ATOMIC_RELAXED));
	stat_line(out, "stfs_backend_read_requests_total",
		  "Checkpoint backend read calls.", "counter",
		  __atomic_load_n(&bs->reads, __ATOMIC_RELAXED));
	stat_line(out, "stfs_backend_read_bytes_total",
		  "Bytes read from the checkpoint backend.", "counter",
		  __atomic_load_n(&bs->read_bytes, __ATOMIC_RELAXED));
	stat_line(out, "stfs_backend_remove_requests_total",
		  "Checkpoint backend remove calls.", "counter",
		  __atomic_load_n(&bs->removes, __ATOMIC_RELAXED));
	stat_line(out, "stfs_backend_errors_total",
		  "Checkpoint backend errors.", "counter",
		  __atomic_load_n(&bs->errors, __ATOMIC_RELAXED));
	stat_line(out, "stfs_http_requests_total", "HTTP requests sent.",
		  "counter", hs.requests);
	stat_line(out, "stfs_http_retries_total", "HTTP retries.", "counter",
		  hs.retries);
	stat_line(out, "stfs_http_errors_total", "HTTP failures.", "counter",
		  hs.errors);
	stat_line(out, "stfs_http_timeouts_total", "HTTP deadlines hit.",
		  "counter", hs.timeouts);
	stat_line(out, "stfs_http_paused_total",
		  "HTTP requests not sent: their endpoint was unreachable "
		  "less than one timeout ago.",
		  "counter", hs.paused);
	if (fs->engine) {
		struct engine_stats es;

		engine_get_stats(fs->engine, &es);
		stat_line(out, "stfs_engine_requests_total",
			  "Requests to the engine REST API.", "counter",
			  es.requests);
		stat_line(out, "stfs_engine_failures_total",
			  "Failed engine requests.", "counter", es.failures);
		stat_line(out, "stfs_engine_failovers_total",
			  "Switches to another engine URL.", "counter",
			  es.failovers);
		stat_line(out, "stfs_engine_list_fetches_total",
			  "Job list refreshes.", "counter", es.list_fetches);
		stat_line(out, "stfs_engine_cache_hits_total",
			  "Job list answers served from the cache.", "counter",
			  es.cache_hits);
		buf_puts(out, "# HELP stfs_engine_request_duration_seconds "
			      "Engine REST requests, retries included.\n"
			      "# TYPE stfs_engine_request_duration_seconds "
			      "histogram\n");
		hist_render(out, "stfs_engine_request_duration_seconds", "",
			    &es.latency);
	}
	buf_puts(out, "# HELP stfs_backend_request_duration_seconds Storage "
		      "calls (a whole paged listing is one).\n"
		      "# TYPE stfs_backend_request_duration_seconds "
		      "histogram\n");
	hist_render(out, "stfs_backend_request_duration_seconds",
		    "backend=\"checkpoint\"", &fs->ckpt->stats.latency);
	if (fs->imap)
		hist_render(out, "stfs_backend_request_duration_seconds",
			    "backend=\"imap\"", &fs->imap->stats.latency);
	{
		struct pcache_stats ps;

		pcache_get_stats(fs->pc, &ps);
		stat_line(out, "stfs_pcache_entries", "Cached pseudo-files.",
			  "gauge", ps.entries);
		stat_line(out, "stfs_pcache_bytes",
			  "Bytes held by the pseudo-file cache (cache_max_mb).",
			  "gauge", ps.bytes);
		stat_line(out, "stfs_pcache_evictions_total",
			  "Pseudo-files dropped by cache_max_entries or "
			  "cache_max_mb.",
			  "counter", ps.evictions);
		stat_line(out, "stfs_pcache_size_hits_total",
			  "Stats of pseudo-files answered by the sizes kept "
			  "of dropped texts (counted in the hits too).",
			  "counter", ps.size_hits);
	}
	{
		size_t n, bytes;
		uint64_t ev;

		ckinfo_get_stats(fs->ck, &n, &bytes, &ev);
		stat_line(out, "stfs_type_cache_entries",
			  "Decoded checkpoint types kept.", "gauge", n);
		stat_line(out, "stfs_type_cache_bytes",
			  "Bytes of the decoded checkpoint types kept.",
			  "gauge", bytes);
		stat_line(out, "stfs_type_cache_evictions_total",
			  "Checkpoint types dropped by type_cache_max_entries "
			  "or type_cache_max_mb.",
			  "counter", ev);
	}
	return buf_err(out);
}

/* degraded: the last call failed and nothing succeeded since */
static bool backend_degraded(struct backend *be, int *err, int64_t *err_ms,
			     int64_t *ok_ms, char *msg, size_t msgsz)
{
	be_health(be, err, err_ms, ok_ms, msg, msgsz);
	return *err && *err_ms >= *ok_ms;
}

static void health_backend(struct buf *out, const char *what,
			   struct backend *be)
{
	int err;
	int64_t err_ms, ok_ms;
	char msg[160], t1[64], t2[64];
	bool bad =
		backend_degraded(be, &err, &err_ms, &ok_ms, msg, sizeof(msg));

	render_time_ms(ok_ms, t1, sizeof(t1));
	render_time_ms(err_ms, t2, sizeof(t2));
	buf_printf(out, "%-10s %-8s %s\n", what, bad ? "degraded" : "ok",
		   be->uri);
	buf_printf(out, "%-10s last success %s\n", "", t1);
	if (err) {
		buf_printf(out, "%-10s last error %s: ", "", t2);
		textesc_puts(out, msg);
		buf_puts(out, "\n");
	}
}

int render_prom_daemon(struct view *v, struct buf *out)
{
	struct stfs *fs = v->fs;
	struct backend *bes[2] = {fs->ckpt, fs->imap};
	static const char *const names[2] = {"checkpoint", "imap"};
	char msg[160];
	int64_t err_ms, ok_ms;
	int err;

	buf_puts(out, "# HELP stfs_backend_up 1 when the source answers (its "
		      "last call succeeded), 0 when degraded\n"
		      "# TYPE stfs_backend_up gauge\n");
	for (int i = 0; i < 2; i++)
		if (bes[i])
			buf_printf(out, "stfs_backend_up{backend=\"%s\"} %d\n",
				   names[i],
				   !backend_degraded(bes[i], &err, &err_ms,
						     &ok_ms, msg, sizeof(msg)));
	buf_printf(out, "stfs_backend_up{backend=\"engine\"} %d\n",
		   v->snap->err ? 0 : 1);
	stat_line(out, "stfs_deletions_allowed_total", "Deletions done.",
		  "counter", STFS_GET(fs, deletions_allowed));
	stat_line(out, "stfs_deletions_refused_total", "Deletions refused.",
		  "counter", STFS_GET(fs, deletions_refused));
	return buf_err(out);
}

int render_health(struct view *v, struct buf *out)
{
	char t[64];

	health_backend(out, "checkpoint", v->fs->ckpt);
	if (v->fs->imap)
		health_backend(out, "imap", v->fs->imap);
	render_time_ms(v->snap->data_ms, t, sizeof(t));
	buf_printf(out, "%-10s %-8s %s\n", "engine",
		   v->snap->err ? "degraded" : "ok",
		   v->snap->source[0] ? v->snap->source : "-");
	buf_printf(out, "%-10s data as of %s\n", "", t);
	if (v->snap->err) {
		/* the engine's own words (error bodies), escaped */
		buf_printf(out, "%-10s last error: ", "");
		textesc_puts(out, v->snap->errmsg);
		buf_puts(out, "\n");
	}
	return 0;
}
