/*
 * prom — Prometheus text exposition format 0.0.4 for job metrics.
 *
 * The rendering reads the jobs once, one at a time (README "Memory": one
 * job's metrics tree is alive, never every job's): each (engine key, kind)
 * with a renderable value, and each fixed family, collects the job's
 * samples in a body of its own, in job order.  Then the families get their
 * names, one claimant per name, and are written in name order, each body
 * freed once it is copied out.  A family whose samples all turned out to
 * be missing is not written, so no HELP/TYPE is ever left without samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "view/prom.h"
#include "util/textesc.h"

/* Longest value text: "%.17g" of a double is at most 24 characters. */
#define PROM_VAL_MAX 48
/* Longest vertex label taken from a table key ("Source[12]"), plus NUL. */
#define PROM_VERTEX_MAX 64

enum fam_kind {
	/* fixed families first: they win a name clash with an engine key */
	FAM_STATE,
	FAM_OBJECTS,
	FAM_BYTES,
	FAM_INFLIGHT,
	FAM_PIPELINES,
	FAM_CHECKPOINTS,
	FAM_NEWEST,
	FAM_RESTORE_POINTS,
	FAM_RESTORE_OLDEST,
	FAM_INTERVAL,
	/* engine metrics */
	FAM_SCALAR,
	FAM_TABLE,
};

struct fixed_fam {
	const char *name;
	const char *help;
};

static const struct fixed_fam fixed_fams[] = {
	[FAM_STATE] = {"seatunnel_job_state",
		       "Job state reported by the engine: 1 for the job's "
		       "current state"},
	[FAM_OBJECTS] = {"stfs_job_storage_objects",
			 "Checkpoint storage objects of the job"},
	[FAM_BYTES] = {"stfs_job_storage_bytes",
		       "Total size of the job's checkpoint storage objects"},
	[FAM_INFLIGHT] = {"stfs_job_storage_inflight_objects",
			  "Unfinished (.sertmp) checkpoint objects of the job"},
	[FAM_PIPELINES] = {"stfs_job_pipelines",
			   "Pipelines of the job with checkpoint data"},
	[FAM_CHECKPOINTS] = {"stfs_job_checkpoints",
			     "Checkpoints of the job in storage"},
	[FAM_NEWEST] = {"stfs_job_newest_checkpoint_timestamp_seconds",
			"Time of the job's newest checkpoint, seconds since "
			"the epoch"},
	[FAM_RESTORE_POINTS] = {"stfs_job_restore_points",
				"Pipelines of the job with a restore point in "
				"storage"},
	[FAM_RESTORE_OLDEST] = {"stfs_job_oldest_restore_point_timestamp_"
				"seconds",
				"Write time of the job's oldest restore point, "
				"seconds since the epoch"},
	[FAM_INTERVAL] = {"stfs_job_checkpoint_interval_seconds",
			  "The job's configured checkpoint.interval"},
};

struct fam {
	char name[PROM_NAME_MAX + 1];
	const char *key;
	enum fam_kind kind;
	bool counter;
};

struct job_ref {
	const struct prom_job *j;
	size_t idx;
};

struct table_val {
	const char *table;
	char val[PROM_VAL_MAX];
};

/* ---- text helpers ---- */

/*
 * Append s escaped: backslash and newline always, the double quote when
 * `quote` (label values; HELP text keeps it).  Invalid UTF-8 -> U+FFFD.
 * Other control and format characters (textesc.h), which the exposition
 * format cannot escape, are written as the text \xHH that status shows for
 * them (in the file "\\xHH"), so that no raw escape reaches a terminal.
 */
static size_t prom_rep(const unsigned char *p, size_t l, enum textesc_class k,
		       char *rep, void *ctx)
{
	static const char hex[] = "0123456789abcdef";
	bool quote = *(const bool *)ctx;
	size_t e = 0;

	if (p[0] == '\\' || p[0] == '\n' || (p[0] == '"' && quote)) {
		rep[0] = '\\';
		rep[1] = p[0] == '\n' ? 'n' : (char)p[0];
		return 2;
	}
	if (k == TEXTESC_INVALID) {
		memcpy(rep, "\xef\xbf\xbd", 3);
		return 3;
	}
	if (k == TEXTESC_CONTROL)
		for (size_t b = 0; b < l; b++) {
			memcpy(rep + e, "\\\\x", 3);
			rep[e + 3] = hex[p[b] >> 4];
			rep[e + 4] = hex[p[b] & 15];
			e += 5;
		}
	return e;
}

static int escape_text(struct buf *out, const char *s, bool quote)
{
	return textesc_map(out, s, strlen(s), prom_rep, &quote);
}

int prom_escape_label(struct buf *out, const char *s)
{
	return escape_text(out, s ? s : "", true);
}

static bool is_upper(int c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_lower(int c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/*
 * prefix + snake_case(in) into out.  0; -ENAMETOOLONG when it does not fit
 * in outsz; -EINVAL when `in` has no letter or digit.
 */
static int snake_name(const char *prefix, const char *in, char *out,
		      size_t outsz)
{
	size_t plen = strlen(prefix), o = plen, i;
	bool sep = false, any = false;

	if (plen >= outsz)
		return -ENAMETOOLONG;
	memcpy(out, prefix, plen);
	for (i = 0; in[i]; i++) {
		int c = (unsigned char)in[i];
		int prev = i ? (unsigned char)in[i - 1] : 0;
		int next = (unsigned char)in[i + 1];

		if (!is_upper(c) && !is_lower(c) && !is_digit(c)) {
			sep = true;
			continue;
		}
		if (is_upper(c) && (is_lower(prev) || is_digit(prev) ||
				    (is_upper(prev) && is_lower(next))))
			sep = true;
		if (sep && any) {
			if (o + 1 >= outsz)
				return -ENAMETOOLONG;
			out[o++] = '_';
		}
		sep = false;
		if (o + 1 >= outsz)
			return -ENAMETOOLONG;
		out[o++] = (char)(is_upper(c) ? c - 'A' + 'a' : c);
		any = true;
	}
	out[o] = '\0';
	return any ? 0 : -EINVAL;
}

void prom_metric_name(const char *engine_name, char *out, size_t outsz)
{
	if (!outsz)
		return;
	if (!engine_name ||
	    snake_name("seatunnel_job_", engine_name, out, outsz))
		out[0] = '\0';
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !memcmp(s + n - m, suffix, m);
}

/*
 * Name segments that promtool's lint rejects: unit abbreviations, metric
 * type names, and non-base units (a prefix before a base unit, or a time
 * or temperature unit that is not the base one).
 */
static bool lint_segment(const char *seg, size_t n)
{
	static const char *const whole[] = {
		"s",	 "ms",	      "us",	 "ns",	       "sec",
		"b",	 "kb",	      "mb",	 "gb",	       "tb",
		"pb",	 "m",	      "h",	 "d",	       "counter",
		"gauge", "histogram", "summary", "untyped",    "minutes",
		"hours", "days",      "weeks",	 "fahrenheit",
	};
	static const char *const prefixes[] = {
		"pico",	 "nano", "micro", "milli", "centi", "deci", "deca",
		"hecto", "kilo", "kibi",  "mega",  "mibi",  "mebi", "giga",
		"gibi",	 "tera", "tebi",  "peta",  "pebi",
	};
	static const char *const units[] = {
		"amperes", "bytes",  "celsius", "grams",   "joules",
		"kelvin",  "meters", "metres",	"seconds", "volts",
	};
	size_t i, k, pl;

	for (i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
		if (strlen(whole[i]) == n && !memcmp(seg, whole[i], n))
			return true;
	}
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		pl = strlen(prefixes[i]);
		if (pl >= n || memcmp(seg, prefixes[i], pl))
			continue;
		for (k = 0; k < sizeof(units) / sizeof(units[0]); k++) {
			if (strlen(units[k]) == n - pl &&
			    !memcmp(seg + pl, units[k], n - pl))
				return true;
		}
	}
	return false;
}

/*
 * Rewrite the segments of name[from..] that promtool would lint: glue a
 * bad segment to the one before it ("latency_ms" -> "latencyms") when that
 * is clean, else append "value" ("ms_x" -> "msvalue_x").  Engine names of
 * the engine's plain metric names have no such segment and pass unchanged.
 * 0; -ENAMETOOLONG.
 */
static int fix_segments(char *name, size_t from, size_t namesz)
{
	char tmp[PROM_NAME_MAX + 1];
	size_t o = 0, last = 0, i = from, n;

	while (name[i]) {
		const char *seg = name + i;
		bool bad, glue = false;

		n = strcspn(seg, "_");
		if (o + 1 + n + 5 >= sizeof(tmp))
			return -ENAMETOOLONG;
		bad = lint_segment(seg, n);
		if (bad && o) {
			memcpy(tmp + o, seg, n); /* tentatively glued */
			glue = !lint_segment(tmp + last, o - last + n);
		}
		if (!glue) {
			if (o)
				tmp[o++] = '_';
			last = o;
			memcpy(tmp + o, seg, n);
		}
		o += n;
		if (bad && !glue) {
			memcpy(tmp + o, "value", 5);
			o += 5;
		}
		i += n;
		if (name[i] == '_')
			i++;
	}
	if (from + o >= namesz)
		return -ENAMETOOLONG;
	memcpy(name + from, tmp, o);
	name[from + o] = '\0';
	return 0;
}

/* Family name and type for an engine key.  0; -errno if it has none. */
static int engine_family(const char *key, enum fam_kind kind, struct fam *f)
{
	const char *base = key;
	const char *prefix = "seatunnel_job_";
	const char *suffix = "";
	size_t len;
	int rc;

	if (kind == FAM_TABLE) {
		prefix = "seatunnel_job_table_";
		if (!strncmp(base, "Table", 5))
			base += 5;
	}
	rc = snake_name(prefix, base, f->name, sizeof(f->name));
	if (rc)
		return rc;
	f->counter = ends_with(f->name, "_count") ||
		     ends_with(f->name, "_bytes") ||
		     ends_with(f->name, "_total");
	rc = fix_segments(f->name, strlen(prefix), sizeof(f->name));
	if (rc)
		return rc;
	if (f->counter && !ends_with(f->name, "_total"))
		suffix = "_total";
	else if (!f->counter &&
		 (ends_with(f->name, "_sum") || ends_with(f->name, "_bucket")))
		suffix = "_value";
	len = strlen(f->name);
	if (len + strlen(suffix) >= sizeof(f->name))
		return -ENAMETOOLONG;
	memcpy(f->name + len, suffix, strlen(suffix) + 1);
	f->key = key;
	f->kind = kind;
	return 0;
}

/* ---- values ---- */

static int fmt_double(double d, char *out, size_t outsz)
{
	int prec;

	if (!isfinite(d))
		return -EINVAL;
	for (prec = 15; prec < 17; prec++) {
		snprintf(out, outsz, "%.*g", prec, d);
		if (strtod(out, NULL) == d)
			return 0;
	}
	snprintf(out, outsz, "%.17g", d);
	return 0;
}

/* A decimal number as text: [+-]digits[.digits][(e|E)[+-]digits]. */
static int fmt_number_text(const char *s, size_t len, char *out, size_t outsz)
{
	size_t i = 0, nd = 0;
	bool integer = true;
	char *end;
	double d;

	if (strlen(s) != len)
		return -EINVAL;
	if (s[i] == '+' || s[i] == '-')
		i++;
	while (is_digit(s[i])) {
		i++;
		nd++;
	}
	if (s[i] == '.') {
		integer = false;
		i++;
		while (is_digit(s[i])) {
			i++;
			nd++;
		}
	}
	if (!nd)
		return -EINVAL;
	if (s[i] == 'e' || s[i] == 'E') {
		size_t ne = 0;

		integer = false;
		i++;
		if (s[i] == '+' || s[i] == '-')
			i++;
		while (is_digit(s[i])) {
			i++;
			ne++;
		}
		if (!ne)
			return -EINVAL;
	}
	if (i != len)
		return -EINVAL;
	if (integer) {
		long long v;

		errno = 0;
		v = strtoll(s, &end, 10);
		if (!errno && end == s + len) {
			snprintf(out, outsz, "%lld", v);
			return 0;
		}
		/* past int64: fall through to a double */
	}
	d = strtod(s, &end);
	if (end != s + len)
		return -EINVAL;
	return fmt_double(d, out, outsz);
}

/* The Prometheus text of a metric value; -EINVAL when not renderable. */
static int fmt_value(const json_t *v, char *out, size_t outsz)
{
	if (json_is_string(v))
		return fmt_number_text(json_string_value(v),
				       json_string_length(v), out, outsz);
	if (json_is_integer(v)) {
		snprintf(out, outsz, "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		return 0;
	}
	if (json_is_real(v))
		return fmt_double(json_real_value(v), out, outsz);
	return -EINVAL;
}

/*
 * The sample text of `v` in family `f`; -EINVAL when it has none.  A
 * counter never goes below zero (Prometheus takes a decrease for a reset,
 * OpenMetrics refuses the sample): a negative counter value is dropped, a
 * counter's -0 is written 0.  Gauges keep their sign.
 */
static int fam_value(const struct fam *f, const json_t *v, char *out,
		     size_t outsz)
{
	int rc = fmt_value(v, out, outsz);

	if (rc || !f->counter || out[0] != '-')
		return rc;
	if (strtod(out, NULL) != 0) {
		log_debug("prom: negative counter sample of %s dropped",
			  f->name);
		return -EINVAL;
	}
	snprintf(out, outsz, "0");
	return 0;
}

static bool table_renderable(json_t *obj)
{
	const char *k;
	json_t *v;
	char tmp[PROM_VAL_MAX];

	json_object_foreach (obj, k, v) {
		if (!fmt_value(v, tmp, sizeof(tmp)))
			return true;
	}
	return false;
}

/* ---- sorting ---- */

static int cmp_job_ref(const void *a, const void *b)
{
	const struct job_ref *x = a, *y = b;
	size_t lx = strlen(x->j->id), ly = strlen(y->j->id);
	int c;

	if (lx != ly)
		return lx < ly ? -1 : 1;
	c = strcmp(x->j->id, y->j->id);
	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_key_kind(const char *ka, enum fam_kind a, const char *kb,
			enum fam_kind b)
{
	int c;

	if ((a < FAM_SCALAR) != (b < FAM_SCALAR))
		return a < FAM_SCALAR ? -1 : 1;
	if (ka && kb) {
		c = strcmp(ka, kb);
		if (c)
			return c;
	}
	return a < b ? -1 : a > b;
}

static int cmp_fam(const void *a, const void *b)
{
	const struct fam *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return cmp_key_kind(x->key, x->kind, y->key, y->kind);
}

static int cmp_table_val(const void *a, const void *b)
{
	const struct table_val *x = a, *y = b;

	return strcmp(x->table, y->table);
}

/* ---- rendering ---- */

/*
 * A family being rendered.  The jobs are read one at a time (README
 * "Memory": one job's metrics tree alive, not every job's), so each
 * family's samples go to a body of its own, in job order, and the bodies
 * are joined in name order at the end.
 */
struct sfam {
	struct fam f; /* f.key points at key[] (engine), NULL (fixed) */
	bool named;   /* engine_family() gave it a name */
	bool has;     /* some job has a renderable value for it */
	struct buf body;
	char key[]; /* the engine key, copied: the job's tree goes */
};

struct render {
	struct buf *out;
	struct job_ref *jobs;
	size_t njobs;
	struct table_val *tv; /* scratch for one job's tables */
	size_t tvcap;
	struct sfam *fixed[FAM_SCALAR];
	struct sfam **fams; /* engine families, sorted by key then kind */
	size_t nfams, fcap;
};

/* A sample: the job's labels, then up to two more (lname[i] NULL: none). */
static int emit_sample2(struct buf *out, const char *fam,
			const struct prom_job *j, const char *const lname[2],
			const char *const lval[2], const char *value)
{
	int rc;

	rc = buf_puts(out, fam);
	if (!rc)
		rc = buf_puts(out, "{job_id=\"");
	if (!rc)
		rc = prom_escape_label(out, j->id);
	if (!rc && j->name) {
		rc = buf_puts(out, "\",job_name=\"");
		if (!rc)
			rc = prom_escape_label(out, j->name);
	}
	for (int i = 0; i < 2 && !rc; i++) {
		if (!lname[i])
			continue;
		rc = buf_printf(out, "\",%s=\"", lname[i]);
		if (!rc)
			rc = prom_escape_label(out, lval[i]);
	}
	if (!rc)
		rc = buf_printf(out, "\"} %s\n", value);
	return rc;
}

static int emit_sample(struct buf *out, const char *fam,
		       const struct prom_job *j, const char *lname,
		       const char *lval, const char *value)
{
	const char *const n[2] = {lname, NULL}, *const v[2] = {lval, NULL};

	return emit_sample2(out, fam, j, n, v, value);
}

/*
 * A per-table key of SeaTunnel 2.3.13/3.x names the vertex first, then the
 * table, whose name has dots itself: "Sink[0].db.table".  The length of
 * the vertex ("Sink[0]": letters, '[', digits, ']', then '.' and a table),
 * or 0 for a plain table name ("db.table", the 2.3 form).
 */
static size_t vertex_len(const char *key)
{
	size_t i = 0, d;

	while (is_upper(key[i]) || is_lower(key[i]))
		i++;
	if (i == 0 || key[i] != '[')
		return 0;
	for (d = ++i; is_digit(key[i]); i++)
		;
	if (i == d || key[i] != ']' || key[i + 1] != '.' || !key[i + 2] ||
	    i + 1 >= PROM_VERTEX_MAX)
		return 0;
	return i + 1;
}

static int emit_tables(struct render *r, struct buf *out, const struct fam *f,
		       const struct prom_job *j, json_t *m)
{
	json_t *obj = json_object_get(m, f->key);
	size_t n = 0, i;
	const char *k;
	json_t *v;
	int rc;

	if (!json_is_object(obj))
		return 0;
	if (json_object_size(obj) > r->tvcap) {
		size_t cap = json_object_size(obj);
		struct table_val *tv = realloc(r->tv, cap * sizeof(*tv));

		if (!tv)
			return -ENOMEM;
		r->tv = tv;
		r->tvcap = cap;
	}
	json_object_foreach (obj, k, v) {
		if (n >= r->tvcap)
			break;
		if (fam_value(f, v, r->tv[n].val, sizeof(r->tv[n].val)))
			continue;
		r->tv[n++].table = k;
	}
	if (n > 1)
		qsort(r->tv, n, sizeof(*r->tv), cmp_table_val);
	for (i = 0; i < n; i++) {
		const char *key = r->tv[i].table;
		size_t vl = vertex_len(key);
		char vertex[PROM_VERTEX_MAX];
		const char *ln[2] = {"vertex", "table"},
			   *lv[2] = {vertex, key + vl + 1};

		if (vl) {
			memcpy(vertex, key, vl);
			vertex[vl] = '\0';
		} else {
			ln[0] = NULL;
			lv[1] = key;
		}
		rc = emit_sample2(out, f->name, j, ln, lv, r->tv[i].val);
		if (rc)
			return rc;
	}
	return 0;
}

/* One job's samples of family f into `out`; m: the job's metrics or NULL */
static int emit_job(struct render *r, struct buf *out, const struct fam *f,
		    const struct prom_job *j, json_t *m)
{
	char val[PROM_VAL_MAX];
	uint64_t u;

	switch (f->kind) {
	case FAM_STATE:
		if (!j->state_name)
			return 0;
		return emit_sample(out, f->name, j, "state", j->state_name,
				   "1");
	case FAM_OBJECTS:
		u = j->objects;
		break;
	case FAM_BYTES:
		u = j->bytes;
		break;
	case FAM_INFLIGHT:
		u = j->tmp_objects;
		break;
	case FAM_PIPELINES:
		u = j->pipelines;
		break;
	case FAM_CHECKPOINTS:
		u = j->checkpoints;
		break;
	case FAM_NEWEST:
		if (!j->has_storage || j->newest_ckpt_ms <= 0)
			return 0;
		snprintf(val, sizeof(val), "%" PRId64 ".%03" PRId64,
			 j->newest_ckpt_ms / 1000, j->newest_ckpt_ms % 1000);
		return emit_sample(out, f->name, j, NULL, NULL, val);
	case FAM_RESTORE_POINTS:
		u = j->restore_points;
		break;
	case FAM_RESTORE_OLDEST:
		if (!j->has_storage || j->oldest_restore_ms <= 0)
			return 0;
		snprintf(val, sizeof(val), "%" PRId64 ".%03" PRId64,
			 j->oldest_restore_ms / 1000,
			 j->oldest_restore_ms % 1000);
		return emit_sample(out, f->name, j, NULL, NULL, val);
	case FAM_INTERVAL:
		if (j->ckpt_interval_ms <= 0)
			return 0;
		snprintf(val, sizeof(val), "%" PRId64 ".%03" PRId64,
			 j->ckpt_interval_ms / 1000,
			 j->ckpt_interval_ms % 1000);
		return emit_sample(out, f->name, j, NULL, NULL, val);
	case FAM_SCALAR: {
		json_t *v = json_object_get(m, f->key);

		if (!v || fam_value(f, v, val, sizeof(val)))
			return 0;
		return emit_sample(out, f->name, j, NULL, NULL, val);
	}
	case FAM_TABLE:
		return emit_tables(r, out, f, j, m);
	default:
		return 0;
	}
	if (!j->has_storage)
		return 0;
	snprintf(val, sizeof(val), "%" PRIu64, u);
	return emit_sample(out, f->name, j, NULL, NULL, val);
}

/* HELP and TYPE of a family, then its samples */
static int emit_family(struct buf *out, const struct sfam *s)
{
	const struct fam *f = &s->f;
	int rc;

	rc = buf_printf(out, "# HELP %s ", f->name);
	if (rc)
		return rc;
	if (f->kind < FAM_SCALAR) {
		rc = buf_puts(out, fixed_fams[f->kind].help);
	} else {
		rc = buf_puts(out, "SeaTunnel engine job metric ");
		if (!rc)
			rc = escape_text(out, f->key, false);
		if (!rc && f->kind == FAM_TABLE)
			rc = buf_puts(out, ", per table");
	}
	if (!rc)
		rc = buf_printf(out, "\n# TYPE %s %s\n", f->name,
				f->counter ? "counter" : "gauge");
	if (!rc)
		rc = buf_append(out, s->body.data, s->body.len);
	return rc;
}

static struct sfam *sfam_new(const char *key, enum fam_kind kind, size_t max)
{
	size_t kl = key ? strlen(key) + 1 : 0;
	struct sfam *s = calloc(1, sizeof(*s) + kl);

	if (!s)
		return NULL;
	buf_init(&s->body, max);
	s->f.kind = kind;
	if (!key) {
		snprintf(s->f.name, sizeof(s->f.name), "%s",
			 fixed_fams[kind].name);
		s->named = true;
		return s;
	}
	memcpy(s->key, key, kl);
	s->named = !engine_family(s->key, kind, &s->f);
	if (!s->named)
		log_debug("prom: metric key '%s' has no usable name", key);
	s->f.key = s->key;
	return s;
}

static void sfam_free(struct sfam *s)
{
	if (!s)
		return;
	buf_release(&s->body);
	free(s);
}

/* The engine family of (key, kind), made on first sight; NULL: -ENOMEM */
static struct sfam *engine_sfam(struct render *r, const char *key,
				enum fam_kind kind)
{
	size_t lo = 0, hi = r->nfams;
	struct sfam *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_key_kind(key, kind, r->fams[mid]->f.key,
				     r->fams[mid]->f.kind);

		if (!c)
			return r->fams[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (r->nfams == r->fcap) {
		size_t cap = r->fcap ? r->fcap * 2 : 32;
		struct sfam **nf = realloc(r->fams, cap * sizeof(*nf));

		if (!nf)
			return NULL;
		r->fams = nf;
		r->fcap = cap;
	}
	s = sfam_new(key, kind, r->out->max);
	if (!s)
		return NULL;
	memmove(r->fams + lo + 1, r->fams + lo,
		(r->nfams - lo) * sizeof(*r->fams));
	r->fams[lo] = s;
	r->nfams++;
	return s;
}

/*
 * One job, every family: its metrics are parsed here (from the text when
 * the caller gave no tree) and dropped before the next job.
 */
static int render_job(struct render *r, const struct prom_job *j)
{
	json_t *m = j->metrics, *own = NULL, *v;
	const char *key;
	char tmp[PROM_VAL_MAX];
	int rc = 0;

	if (!m && j->metrics_text) {
		own = json_loadb(j->metrics_text, j->metrics_len,
				 JSON_ALLOW_NUL, NULL);
		m = own;
	}
	for (int k = FAM_STATE; k < FAM_SCALAR && !rc; k++) {
		struct sfam *s = r->fixed[k];
		size_t before = s->body.len;

		rc = emit_job(r, &s->body, &s->f, j, m);
		s->has = s->has || s->body.len > before;
	}
	if (!json_is_object(m))
		goto out;
	json_object_foreach (m, key, v) {
		enum fam_kind kind;
		struct sfam *s;

		if (rc)
			break;
		if (json_is_object(v)) {
			if (!table_renderable(v))
				continue;
			kind = FAM_TABLE;
		} else if (!fmt_value(v, tmp, sizeof(tmp))) {
			kind = FAM_SCALAR;
		} else {
			continue;
		}
		s = engine_sfam(r, key, kind);
		if (!s) {
			rc = -ENOMEM;
			break;
		}
		s->has = true;
		if (s->named)
			rc = emit_job(r, &s->body, &s->f, j, m);
	}
out:
	json_decref(own);
	return rc;
}

static int cmp_sfam(const void *a, const void *b)
{
	const struct sfam *const *x = a, *const *y = b;

	return cmp_fam(&(*x)->f, &(*y)->f);
}

/*
 * The families in name order, one per name (the fixed family, then the
 * byte-smaller key wins a clash), each body freed once it is written.
 */
static int join_families(struct render *r)
{
	struct sfam **all = calloc(r->nfams + FAM_SCALAR, sizeof(*all));
	const char *last = NULL;
	size_t n = 0, i;
	int rc = 0;

	if (!all)
		return -ENOMEM;
	for (i = 0; i < FAM_SCALAR; i++)
		if (r->fixed[i]->has)
			all[n++] = r->fixed[i];
	for (i = 0; i < r->nfams; i++)
		if (r->fams[i]->has && r->fams[i]->named)
			all[n++] = r->fams[i];
	qsort(all, n, sizeof(*all), cmp_sfam);
	for (i = 0; i < n && !rc; i++) {
		if (last && !strcmp(last, all[i]->f.name)) {
			log_debug(
				"prom: metric key '%s' clashes with family %s",
				all[i]->f.key ? all[i]->f.key : "",
				all[i]->f.name);
			continue;
		}
		last = all[i]->f.name;
		/* a family whose samples were all dropped writes nothing */
		if (all[i]->body.len)
			rc = emit_family(r->out, all[i]);
		buf_release(&all[i]->body);
	}
	free(all);
	return rc;
}

int prom_render_jobs(struct buf *out, const struct prom_job *jobs, size_t n)
{
	struct render r = {.out = out};
	size_t i, mark = out->len;
	locale_t cloc, old = (locale_t)0;
	int rc = 0;

	if (!n)
		return 0;
	cloc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (cloc)
		old = uselocale(cloc);

	r.jobs = calloc(n, sizeof(*r.jobs));
	if (!r.jobs) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < FAM_SCALAR; i++) {
		r.fixed[i] = sfam_new(NULL, (enum fam_kind)i, out->max);
		if (!r.fixed[i]) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		if (!jobs[i].id)
			continue;
		r.jobs[r.njobs++] = (struct job_ref){.j = &jobs[i], .idx = i};
	}
	qsort(r.jobs, r.njobs, sizeof(*r.jobs), cmp_job_ref);
	for (i = 0, n = 0; i < r.njobs; i++) {
		if (n && !strcmp(r.jobs[n - 1].j->id, r.jobs[i].j->id))
			continue; /* duplicate id: the first one given wins */
		r.jobs[n++] = r.jobs[i];
	}
	r.njobs = n;

	for (i = 0; i < r.njobs && !rc; i++)
		rc = render_job(&r, r.jobs[i].j);
	if (!rc)
		rc = join_families(&r);
out:
	if (rc) {
		out->len = mark;
		if (out->data)
			out->data[mark] = '\0';
	}
	for (i = 0; i < FAM_SCALAR; i++)
		sfam_free(r.fixed[i]);
	for (i = 0; i < r.nfams; i++)
		sfam_free(r.fams[i]);
	free(r.fams);
	free(r.tv);
	free(r.jobs);
	if (cloc) {
		uselocale(old);
		freelocale(cloc);
	}
	return rc;
}

int prom_render_summary(struct buf *out, const struct prom_job *jobs, size_t n)
{
	uint64_t bytes = 0, dead = 0, orphans = 0;

	for (size_t i = 0; i < n; i++) {
		if (!jobs[i].dead)
			continue;
		dead++;
		orphans += jobs[i].orphan != 0;
		if (jobs[i].has_storage)
			bytes += jobs[i].bytes;
	}
	return buf_printf(out,
			  "# HELP stfs_dead_jobs_storage_bytes Checkpoint "
			  "storage held by jobs in an end state or orphaned\n"
			  "# TYPE stfs_dead_jobs_storage_bytes gauge\n"
			  "stfs_dead_jobs_storage_bytes %" PRIu64 "\n"
			  "# HELP stfs_dead_jobs Jobs in an end state or "
			  "orphaned\n"
			  "# TYPE stfs_dead_jobs gauge\n"
			  "stfs_dead_jobs %" PRIu64 "\n"
			  "# HELP stfs_orphan_jobs Jobs in storage that the "
			  "engine does not know, older than orphan_grace\n"
			  "# TYPE stfs_orphan_jobs gauge\n"
			  "stfs_orphan_jobs %" PRIu64 "\n",
			  bytes, dead, orphans);
}

static int imap_labels(struct buf *out, const char *fam,
		       const struct prom_imap_map *m)
{
	int rc = buf_printf(out, "%s{cluster=\"", fam);

	if (!rc)
		rc = prom_escape_label(out, m->cluster);
	if (!rc)
		rc = buf_puts(out, "\",map=\"");
	if (!rc)
		rc = prom_escape_label(out, m->map);
	return rc;
}

int prom_render_imap(struct buf *out, const struct prom_imap_map *maps,
		     size_t n)
{
	static const struct {
		const char *name, *help;
	} fams[] = {
		{"stfs_imap_load_failed",
		 "1 when the engine would fail to load the IMap map"},
		{"stfs_imap_reclaimable_bytes",
		 "Bytes of IMap WAL regions rm -r accepts to remove now"},
		{"stfs_imap_regions", "IMap WAL regions by rm verdict"},
		{"stfs_imap_superseded_bytes",
		 "Bytes of superseded IMap WAL regions, removable once every "
		 "member is stopped"},
		{"stfs_imap_wal_bytes",
		 "Bytes of all WAL files of the IMap map"},
	};
	int rc = 0;

	if (n == 0)
		return 0;
	for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]) && !rc; f++) {
		rc = buf_printf(out, "# HELP %s %s\n# TYPE %s gauge\n",
				fams[f].name, fams[f].help, fams[f].name);
		for (size_t i = 0; i < n && !rc; i++) {
			const struct imapsum_fig *g = &maps[i].fig;
			uint64_t v = f == 0   ? (uint64_t)g->failed
				     : f == 1 ? g->reclaim_bytes
				     : f == 3 ? g->superseded_bytes
					      : g->bytes;

			if (f != 2) {
				rc = imap_labels(out, fams[f].name, &maps[i]);
				if (!rc)
					rc = buf_printf(out,
							"\"} %" PRIu64 "\n", v);
				continue;
			}
			for (size_t k = 0; k < IMAPSUM_NV && !rc; k++) {
				rc = imap_labels(out, fams[f].name, &maps[i]);
				if (!rc)
					rc = buf_printf(
						out,
						"\",verdict=\"%s\"} %" PRIu64
						"\n",
						imapsum_verdicts[k],
						g->by_verdict[k]);
			}
		}
	}
	return rc;
}
