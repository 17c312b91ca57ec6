/*
 * engine_json.c — pure parsing of SeaTunnel REST v2 answers (jansson).
 *
 * No I/O, no globals.  Hostile input is expected: entries that are not
 * objects, ids that are not 1-19 digits, wrong types, are skipped with a
 * log_warn; a document that is not JSON or not a list is -EPROTO.  jansson
 * itself bounds nesting depth (2048) and rejects integers over 64 bits.
 */
#include "backends/engine.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util/jobid.h"
#include "util/log.h"
#include "util/pcache.h"

static const char *const state_names[JS_COUNT] = {
	[JS_INITIALIZING] = "INITIALIZING",
	[JS_CREATED] = "CREATED",
	[JS_PENDING] = "PENDING",
	[JS_SCHEDULED] = "SCHEDULED",
	[JS_RUNNING] = "RUNNING",
	[JS_FAILING] = "FAILING",
	[JS_FAILED] = "FAILED",
	[JS_DOING_SAVEPOINT] = "DOING_SAVEPOINT",
	[JS_SAVEPOINT_DONE] = "SAVEPOINT_DONE",
	[JS_CANCELING] = "CANCELING",
	[JS_CANCELED] = "CANCELED",
	[JS_FINISHED] = "FINISHED",
	[JS_UNKNOWABLE] = "UNKNOWABLE",
	[JS_ORPHAN] = "ORPHAN",
	[JS_UNKNOWN] = "UNKNOWN",
};

const char *job_state_name(int state)
{
	if (state < 0 || state >= JS_COUNT)
		return "UNKNOWN";
	return state_names[state];
}

int job_state_parse(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i <= JS_UNKNOWABLE; i++)
		if (!strcasecmp(name, state_names[i]))
			return i;
	return -1;
}

bool job_state_is_end(int state)
{
	return state == JS_FAILED || state == JS_SAVEPOINT_DONE ||
	       state == JS_CANCELED || state == JS_FINISHED ||
	       state == JS_UNKNOWABLE;
}

static int two_digits(const char *s, int *v)
{
	if (!isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[1]))
		return -1;
	*v = (s[0] - '0') * 10 + (s[1] - '0');
	return 0;
}

int64_t engine_parse_time(const char *s)
{
	struct tm tm = {0};
	int y1, y2, mo, d, h, mi, se;
	time_t t;

	/* yyyy-MM-dd HH:mm:ss, exactly 19 characters */
	if (!s || strlen(s) != 19 || s[4] != '-' || s[7] != '-' ||
	    s[10] != ' ' || s[13] != ':' || s[16] != ':')
		return -1;
	if (two_digits(s, &y1) || two_digits(s + 2, &y2) ||
	    two_digits(s + 5, &mo) || two_digits(s + 8, &d) ||
	    two_digits(s + 11, &h) || two_digits(s + 14, &mi) ||
	    two_digits(s + 17, &se))
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    se > 60)
		return -1;
	tm.tm_year = y1 * 100 + y2 - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t == (time_t)-1)
		return -1;
	return (int64_t)t;
}

/*
 * Job texts are refcounted (README "Memory"): the header sits before the
 * bytes, so that engine_job.json stays a plain string for its readers.
 */
struct jtext {
	unsigned refs; /* atomic */
	unsigned pad;
	char s[];
};

static struct jtext *jtext_of(char *t)
{
	return (struct jtext *)(void *)(t - offsetof(struct jtext, s));
}

char *engine_text_new(size_t n)
{
	char *p = malloc(sizeof(struct jtext) + n + 1), *t;

	if (!p)
		return NULL;
	t = p + offsetof(struct jtext, s);
	jtext_of(t)->refs = 1;
	t[n] = '\0';
	return t;
}

bool engine_text_put(char *t)
{
	struct jtext *jt;

	if (!t)
		return false;
	jt = jtext_of(t);
	if (__atomic_sub_fetch(&jt->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return false;
	free(jt);
	return true;
}

bool engine_job_share_text(struct engine_job *j, const struct engine_job *old)
{
	if (!old || !old->json || !j->json || old->json == j->json ||
	    old->json_len != j->json_len ||
	    memcmp(old->json, j->json, j->json_len) != 0)
		return false;
	__atomic_add_fetch(&jtext_of(old->json)->refs, 1, __ATOMIC_RELAXED);
	engine_text_put(j->json);
	j->json = old->json;
	return true;
}

/* Dump `v` compact, key order kept, with a final newline, into a job text
 * (engine_text_new).  NULL on ENOMEM. */
static char *dump_nl(const json_t *v, size_t *len)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER |
					JSON_ENCODE_ANY);
	size_t n;
	char *r;

	if (!s)
		return NULL;
	n = strlen(s);
	r = engine_text_new(n + 1);
	if (r) {
		memcpy(r, s, n);
		r[n] = '\n';
		*len = n + 1;
	}
	free(s);
	return r;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Parse a positive decimal int (pipeline id); -1 if not one. */
static int parse_pid(const char *s, size_t n)
{
	long v = 0;

	if (n == 0 || n > 9)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v >= 1 ? (int)v : -1;
}

static int add_pid(int **arr, size_t *n, size_t *cap, int pid)
{
	for (size_t i = 0; i < *n; i++)
		if ((*arr)[i] == pid)
			return 0;
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 4;
		int *p;

		if (nc > 4096)
			return 0; /* absurd; ignore the rest */
		p = realloc(*arr, nc * sizeof(**arr));
		if (!p)
			return -ENOMEM;
		*arr = p;
		*cap = nc;
	}
	(*arr)[(*n)++] = pid;
	return 0;
}

static int collect_dag_pipelines(json_t *dag, struct engine_job *out)
{
	json_t *edges, *vmap, *v;
	const char *key;
	size_t cap = 0, i;
	int pid, rc;

	if (!json_is_object(dag))
		return 0;
	edges = json_object_get(dag, "pipelineEdges");
	if (json_is_object(edges)) {
		json_object_foreach (edges, key, v) {
			pid = parse_pid(key, strlen(key));
			if (pid < 0)
				continue;
			rc = add_pid(&out->pipelines, &out->n_pipelines, &cap,
				     pid);
			if (rc)
				return rc;
		}
	}
	vmap = json_object_get(dag, "vertexInfoMap");
	if (json_is_array(vmap)) {
		json_array_foreach (vmap, i, v) {
			const char *name = json_string_value(
				json_object_get(v, "vertexName"));
			size_t dl;

			if (!name || strncmp(name, "pipeline-", 9) != 0)
				continue;
			dl = strspn(name + 9, "0123456789");
			if (name[9 + dl] != ' ' && name[9 + dl] != '\0')
				continue;
			pid = parse_pid(name + 9, dl);
			if (pid < 0)
				continue;
			rc = add_pid(&out->pipelines, &out->n_pipelines, &cap,
				     pid);
			if (rc)
				return rc;
		}
	}
	if (out->n_pipelines > 1)
		qsort(out->pipelines, out->n_pipelines, sizeof(*out->pipelines),
		      int_cmp);
	return 0;
}

/* jobDag is an object, or (SeaTunnel 2.3.8's finished jobs, README "The
 * real engine in the tests") that object serialised into a string. */
static int collect_pipelines(json_t *obj, struct engine_job *out)
{
	json_t *dag = json_object_get(obj, "jobDag");
	json_t *parsed = NULL;
	int rc;

	if (json_is_string(dag)) {
		parsed = json_loadb(json_string_value(dag),
				    json_string_length(dag), 0, NULL);
		dag = parsed;
	}
	rc = collect_dag_pipelines(dag, out);
	json_decref(parsed);
	return rc;
}

static int dup_opt_string(json_t *obj, const char *key, char **out)
{
	const char *s = json_string_value(json_object_get(obj, key));

	*out = NULL;
	if (!s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

static int64_t opt_time(json_t *obj, const char *key)
{
	int64_t t =
		engine_parse_time(json_string_value(json_object_get(obj, key)));

	return t < 0 ? 0 : t;
}

/* envOptions."checkpoint.interval" (ms; the engine writes a string or a
 * number); 0 when absent or not a positive whole number of ms */
static int64_t env_interval_ms(json_t *obj)
{
	json_t *env = json_object_get(obj, "envOptions");
	json_t *v = json_object_get(env, "checkpoint.interval");
	const char *s = json_string_value(v);
	char *end;
	long long n;

	if (json_is_integer(v))
		return json_integer_value(v) > 0 ? json_integer_value(v) : 0;
	if (!s || !*s)
		return 0;
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno || *end || n <= 0)
		return 0;
	return n;
}

void engine_job_clear(struct engine_job *j)
{
	if (!j)
		return;
	free(j->id);
	free(j->name);
	free(j->error_msg);
	free(j->status_text);
	engine_text_put(j->json);
	free(j->pipelines);
	memset(j, 0, sizeof(*j));
}

void engine_job_digest(struct engine_job *j)
{
	int64_t f[4] = {j->state, j->create_s, j->finish_s,
			j->running | (j->restored << 1)};
	uint64_t h = pcache_mix(0xcbf29ce484222325ULL, f, sizeof(f));

	/* the metrics are inside json */
	j->digest = pcache_mix(h, j->json, j->json_len);
}

void engine_snap_seal(struct engine_snap *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < s->n_jobs; i++) {
		h = pcache_mix(h, s->jobs[i].id, strlen(s->jobs[i].id) + 1);
		h = pcache_mix(h, &s->jobs[i].digest, sizeof(uint64_t));
	}
	s->digest = h;
}

const char *engine_job_metrics_text(const struct engine_job *j, size_t *len)
{
	if (!j || !j->json || !j->metrics_len ||
	    j->metrics_off + j->metrics_len > j->json_len) {
		*len = 2;
		return "{}";
	}
	*len = j->metrics_len;
	return j->json + j->metrics_off;
}

json_t *engine_job_metrics(const struct engine_job *j)
{
	const char *t;
	size_t len;
	json_t *m;

	if (!j)
		return NULL;
	t = engine_job_metrics_text(j, &len);
	m = json_loadb(t, len, JSON_ALLOW_NUL, NULL);
	if (m && !json_is_object(m)) {
		json_decref(m);
		return NULL;
	}
	return m;
}

/*
 * Where the metrics object's text is in out->json: its compact dump is a
 * substring of the job's (same flags), so the job keeps it once (README
 * "Memory").  Whichever occurrence is found holds the same bytes.  0;
 * -ENOMEM; -EPROTO when it is not found (cannot happen with jansson's
 * dump, checked all the same).
 */
static int locate_metrics(const json_t *metrics, struct engine_job *out)
{
	size_t n;
	char *m = dump_nl(metrics, &n);
	const char *at;

	if (!m)
		return -ENOMEM;
	n--; /* without its newline */
	at = memmem(out->json, out->json_len, m, n);
	engine_text_put(m);
	if (!at) {
		log_warn("engine: job %s: metrics not found in its text",
			 out->id);
		return -EPROTO;
	}
	out->metrics_off = (size_t)(at - out->json);
	out->metrics_len = n;
	return 0;
}

int engine_job_from_json(json_t *obj, bool running, struct engine_job *out)
{
	json_t *jid, *metrics;
	char idbuf[JOBID_SZ];
	const char *st;
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(obj))
		return -EPROTO;
	jid = json_object_get(obj, "jobId");
	if (json_is_string(jid)) {
		/* one canonical id per job (jobid.h): "05" is job 5 */
		if (jobid_normalize(json_string_value(jid),
				    json_string_length(jid), idbuf))
			return -EPROTO;
	} else if (json_is_integer(jid) && json_integer_value(jid) >= 0) {
		buf_fmt(idbuf, sizeof(idbuf), "%lld",
			(long long)json_integer_value(jid));
	} else {
		return -EPROTO;
	}
	out->id = strdup(idbuf);
	if (!out->id)
		goto fail;
	if (dup_opt_string(obj, "jobName", &out->name) ||
	    dup_opt_string(obj, "errorMsg", &out->error_msg))
		goto fail;
	st = json_string_value(json_object_get(obj, "jobStatus"));
	out->state = job_state_parse(st);
	if (out->state < 0) {
		/* a state this stfs does not know: UNKNOWN to the rules (R3),
		 * shown as the engine said it */
		out->state = JS_UNKNOWN;
		if (dup_opt_string(obj, "jobStatus", &out->status_text))
			goto fail;
	}
	out->create_s = opt_time(obj, "createTime");
	out->finish_s = opt_time(obj, "finishTime");
	out->running = running;
	out->restored =
		json_is_true(json_object_get(obj, "isStartWithSavePoint"));
	out->ckpt_interval_ms = env_interval_ms(obj);
	out->json = dump_nl(obj, &out->json_len);
	if (!out->json)
		goto fail;
	metrics = json_object_get(obj, "metrics");
	if (json_is_object(metrics)) {
		rc = locate_metrics(metrics, out);
		if (rc)
			goto fail;
		rc = -ENOMEM;
	}
	rc = collect_pipelines(obj, out);
	if (rc)
		goto fail;
	engine_job_digest(out);
	return 0;
fail:
	engine_job_clear(out);
	return rc;
}

/* An error body {"status":"fail","message":...}: copy the message. */
static bool error_body(json_t *root, char *msg, size_t msgsz)
{
	const char *st, *m;

	if (!json_is_object(root))
		return false;
	st = json_string_value(json_object_get(root, "status"));
	if (!st || strcasecmp(st, "fail") != 0)
		return false;
	m = json_string_value(json_object_get(root, "message"));
	buf_fmt(msg, msgsz, "engine error: %s", m ? m : "(no message)");
	return true;
}

/* Length of the valid UTF-8 sequence at p (RFC 3629), 0 when invalid. */
static size_t utf8_seq(const unsigned char *p, size_t left)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xBF;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0;
	if (n > left)
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F; /* no UTF-16 surrogates */
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return n;
}

static int hex4(const unsigned char *p, size_t left)
{
	int v = 0;

	if (left < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int d = isdigit(p[i]) ? p[i] - '0'
			: (p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f'
				? (p[i] | 0x20) - 'a' + 10
				: -1;

		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/*
 * jansson refuses a whole document for one invalid UTF-8 byte or one
 * unpaired \uD800-\uDFFF escape: a single job name would hide every job.
 * Repair instead (README "Where the state comes from"): each invalid byte
 * becomes U+FFFD, each unpaired surrogate escape \uFFFD.  *out is NULL
 * when the text needs no repair, else a malloc'd copy.  0 or -ENOMEM.
 */
static int utf8_repair(const char *txt, size_t len, char **out, size_t *outlen,
		       size_t *n_bad)
{
	const unsigned char *p = (const unsigned char *)txt;
	unsigned char *d = NULL;
	size_t w = 0;

	*out = NULL;
	*n_bad = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < len;) {
			size_t k = utf8_seq(p + i, len - i);

			if (k == 0) {
				if (d)
					memcpy(d + w, "\xEF\xBF\xBD", 3);
				w += 3;
				(*n_bad) += pass == 0;
				i++;
				continue;
			}
			if (p[i] == '\\' && i + 1 < len && p[i + 1] == 'u') {
				int u = hex4(p + i + 2, len - i - 2), u2 = -1;
				bool lone = false;

				if (u >= 0xD800 && u <= 0xDBFF) {
					if (i + 7 < len && p[i + 6] == '\\' &&
					    p[i + 7] == 'u')
						u2 = hex4(p + i + 8,
							  len - i - 8);
					if (u2 >= 0xDC00 && u2 <= 0xDFFF)
						k = 12; /* a valid pair */
					else
						lone = true;
				} else if (u >= 0xDC00 && u <= 0xDFFF) {
					lone = true;
				}
				if (u >= 0 && k == 1)
					k = 6;
				if (lone) {
					if (d)
						memcpy(d + w, "\\uFFFD", 6);
					w += 6;
					(*n_bad) += pass == 0;
					i += 6;
					continue;
				}
			} else if (p[i] == '\\' && i + 1 < len &&
				   p[i + 1] < 0x80) {
				k = 2; /* \" \\ ...: never the start of \u */
			}
			if (d)
				memcpy(d + w, p + i, k);
			w += k;
			i += k;
		}
		if (pass == 0) {
			if (*n_bad == 0)
				return 0;
			d = malloc(w + 1);
			if (!d)
				return -ENOMEM;
			w = 0;
		}
	}
	d[w] = '\0';
	*out = (char *)d;
	*outlen = w;
	return 0;
}

static json_t *load(const char *txt, size_t len, char *msg, size_t msgsz)
{
	json_error_t jerr;
	json_t *root;
	char *fixed = NULL;
	size_t flen = 0, n_bad = 0;

	if (!txt) {
		buf_fmt(msg, msgsz, "empty answer");
		return NULL;
	}
	if (utf8_repair(txt, len, &fixed, &flen, &n_bad)) {
		buf_fmt(msg, msgsz, "out of memory");
		return NULL;
	}
	if (n_bad)
		log_warn("engine: %zu invalid UTF-8 sequence(s) in an answer "
			 "replaced by U+FFFD",
			 n_bad);
	root = json_loadb(fixed ? fixed : txt, fixed ? flen : len,
			  JSON_ALLOW_NUL, &jerr);
	free(fixed);
	if (!root)
		buf_fmt(msg, msgsz, "not JSON: %s (line %d)", jerr.text,
			jerr.line);
	return root;
}

/*
 * The elements of a plain top-level JSON array, one at a time, so that a
 * list of 10,000 jobs is never one document in memory (its jansson tree
 * costs ~15x the text: README "Memory").  it->pos starts after the '['.
 * 1 and [*s, *e) the next element; 0 at the closing ']' (only white space
 * after it); -1 when the text is not such an array (the caller then loads
 * it whole, which reports the error).
 */
struct arr_iter {
	const char *t;
	size_t len, pos;
	bool first;
};

static bool js_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int arr_next(struct arr_iter *it, size_t *s, size_t *e)
{
	const char *t = it->t;
	size_t p = it->pos, depth = 0;
	bool in_str = false;

	while (p < it->len && js_ws(t[p]))
		p++;
	if (p < it->len && t[p] == ']') {
		for (p++; p < it->len && js_ws(t[p]); p++)
			;
		return p == it->len ? 0 : -1;
	}
	if (!it->first) {
		if (p >= it->len || t[p] != ',')
			return -1;
		for (p++; p < it->len && js_ws(t[p]); p++)
			;
	}
	*s = p;
	for (; p < it->len; p++) {
		char c = t[p];

		if (in_str) {
			if (c == '\\')
				p++;
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				break; /* the array's own ']' */
			depth--;
		} else if (depth == 0 && (c == ',' || js_ws(c))) {
			break;
		}
		if (depth == 0 && (c == '}' || c == ']')) {
			p++;
			break;
		}
	}
	if (in_str || depth || p == *s || p > it->len)
		return -1;
	*e = p;
	it->pos = p;
	it->first = false;
	return 1;
}

/* Accept array entry `v` (index i) as job (*jobs)[*n]; it keeps texts
 * only, nothing of the tree. */
static int take_job(json_t *v, size_t i, bool running, struct engine_job *jobs,
		    size_t *n, const struct engine_snap *prev)
{
	struct engine_job *j = &jobs[*n];
	int r = engine_job_from_json(v, running, j);

	if (r == 0 && prev)
		engine_job_share_text(j, engine_snap_find(prev, j->id));

	if (r == -ENOMEM)
		return r;
	if (r) {
		log_warn("engine: %s list entry %zu skipped: not a job "
			 "object with a 1-19 digit jobId",
			 running ? "running" : "finished", i);
		return 0;
	}
	(*n)++;
	return 0;
}

/* grow *jobs for `more` entries after *n */
static int jobs_room(struct engine_job **jobs, size_t n, size_t more)
{
	struct engine_job *nj;

	if (!more)
		return 0;
	nj = realloc(*jobs, (n + more) * sizeof(**jobs));
	if (!nj)
		return -ENOMEM;
	*jobs = nj;
	return 0;
}

/*
 * The plain-array form, element by element.  1: not handled (not a
 * well-formed array of well-formed elements: parse it whole); 0 or -ENOMEM.
 * Nothing is appended on 1.
 */
static int parse_list_streamed(const char *txt, size_t len, bool running,
			       struct engine_job **jobs, size_t *n,
			       const struct engine_snap *prev)
{
	struct arr_iter it = {.t = txt, .len = len, .first = true};
	size_t p = 0, s, e, count = 0, i, base = *n;
	int r;

	while (p < len && js_ws(txt[p]))
		p++;
	if (p >= len || txt[p] != '[')
		return 1;
	it.pos = p + 1;
	while ((r = arr_next(&it, &s, &e)) == 1)
		count++;
	if (r < 0)
		return 1;
	if (jobs_room(jobs, *n, count))
		return -ENOMEM;
	it.pos = p + 1;
	it.first = true;
	for (i = 0; arr_next(&it, &s, &e) == 1; i++) {
		json_error_t jerr;
		json_t *v = json_loadb(txt + s, e - s,
				       JSON_ALLOW_NUL | JSON_DECODE_ANY, &jerr);

		if (!v) {
			/* undo: the whole-document load reports the error */
			for (size_t k = base; k < *n; k++)
				engine_job_clear(&(*jobs)[k]);
			*n = base;
			return 1;
		}
		r = take_job(v, i, running, *jobs, n, prev);
		json_decref(v);
		if (r)
			return r;
	}
	return 0;
}

int engine_parse_job_list(const char *txt, size_t len, bool running,
			  json_t **root, struct engine_job **jobs, size_t *n,
			  long *total, char *msg, size_t msgsz)
{
	return engine_parse_job_list_prev(txt, len, running, root, jobs, n,
					  total, msg, msgsz, NULL);
}

int engine_parse_job_list_prev(const char *txt, size_t len, bool running,
			       json_t **root, struct engine_job **jobs,
			       size_t *n, long *total, char *msg, size_t msgsz,
			       const struct engine_snap *prev)
{
	json_t *doc = NULL, *arr, *v;
	size_t i, base = *n;
	int rc = 0;
	bool made_root = false;
	char *fixed = NULL;
	size_t flen = 0, n_bad = 0;

	*total = -1;
	if (msgsz)
		msg[0] = '\0';
	if (!txt) {
		buf_fmt(msg, msgsz, "empty answer");
		return -EPROTO;
	}
	if (!*root) {
		*root = json_array();
		if (!*root) {
			buf_fmt(msg, msgsz, "out of memory");
			return -ENOMEM;
		}
		made_root = true;
	}
	/* a plain array is parsed one job at a time */
	if (utf8_repair(txt, len, &fixed, &flen, &n_bad) == 0) {
		rc = parse_list_streamed(fixed ? fixed : txt,
					 fixed ? flen : len, running, jobs, n,
					 prev);
		if (rc <= 0) {
			if (n_bad)
				log_warn("engine: %zu invalid UTF-8 "
					 "sequence(s) in an answer replaced "
					 "by U+FFFD",
					 n_bad);
			free(fixed);
			goto out;
		}
		rc = 0; /* not a plain array of JSON values: load it whole */
	}
	free(fixed);
	doc = load(txt, len, msg, msgsz);
	if (!doc) {
		rc = -EPROTO;
		goto out_proto;
	}
	if (json_is_array(doc)) {
		arr = doc;
	} else if (json_is_object(doc) &&
		   json_is_array(json_object_get(doc, "data"))) {
		json_t *t = json_object_get(doc, "total");

		arr = json_object_get(doc, "data");
		if (json_is_integer(t) && json_integer_value(t) >= 0 &&
		    json_integer_value(t) <= LONG_MAX)
			*total = (long)json_integer_value(t);
		else
			*total = (long)json_array_size(arr);
	} else {
		if (!error_body(doc, msg, msgsz))
			buf_fmt(msg, msgsz, "not a job list");
		rc = -EPROTO;
		goto out_proto;
	}
	rc = jobs_room(jobs, *n, json_array_size(arr));
	json_array_foreach (arr, i, v) {
		if (rc)
			break;
		rc = take_job(v, i, running, *jobs, n, prev);
	}
out:
	if (rc) {
		for (size_t k = base; k < *n; k++)
			engine_job_clear(&(*jobs)[k]);
		*n = base;
		buf_fmt(msg, msgsz, "out of memory");
	}
out_proto:
	if (rc && made_root) {
		json_decref(*root);
		*root = NULL;
	}
	json_decref(doc);
	return rc;
}

int engine_parse_job_object(const char *txt, size_t len, json_t **root,
			    struct engine_job *out, char *msg, size_t msgsz)
{
	json_t *doc;
	int rc;

	*root = NULL;
	memset(out, 0, sizeof(*out));
	if (msgsz)
		msg[0] = '\0';
	doc = load(txt, len, msg, msgsz);
	if (!doc)
		return -EPROTO;
	if (!json_is_object(doc)) {
		buf_fmt(msg, msgsz, "not a job object");
		json_decref(doc);
		return -EPROTO;
	}
	if (error_body(doc, msg, msgsz)) {
		json_decref(doc);
		return -EPROTO;
	}
	if (json_object_size(doc) == 1 && json_object_get(doc, "jobId")) {
		buf_fmt(msg, msgsz, "unknown job");
		json_decref(doc);
		return -ENOENT;
	}
	rc = engine_job_from_json(doc, !json_object_get(doc, "finishTime"),
				  out);
	if (rc) {
		if (rc == -EPROTO)
			buf_fmt(msg, msgsz,
				"not a job object with a 1-19 "
				"digit jobId");
		json_decref(doc);
		return rc;
	}
	*root = doc;
	return 0;
}

/*
 * A job list parsed as it arrives (engine.h): a plain array keeps only the
 * element being read (one job's bytes), anything else is kept whole and
 * parsed at the end by engine_parse_job_list_prev.
 */
enum { LS_START, LS_ARRAY, LS_WHOLE, LS_END, LS_ERR };

struct engine_list_stream {
	int phase;
	bool running, made_root, in_elem, in_str, esc, need_sep, after_sep;
	bool scalar;
	size_t depth, idx, base, n_bad, room;
	struct buf pend; /* the element being read, or the whole text */
	json_t **root;
	struct engine_job **jobs;
	size_t *n;
	const struct engine_snap *prev;
	int err;
	char msg[160];
};

int engine_list_stream_new(bool running, json_t **root,
			   struct engine_job **jobs, size_t *n,
			   const struct engine_snap *prev, size_t max,
			   struct engine_list_stream **out)
{
	struct engine_list_stream *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->running = running;
	s->root = root;
	s->jobs = jobs;
	s->n = n;
	s->prev = prev;
	s->base = *n;
	s->room = *n;
	buf_init(&s->pend, max ? max : SIZE_MAX);
	*out = s;
	return 0;
}

/* Drop the jobs appended and start again at the first byte. */
void engine_list_stream_reset(struct engine_list_stream *s)
{
	size_t max = s->pend.max;

	for (size_t k = s->base; k < *s->n; k++)
		engine_job_clear(&(*s->jobs)[k]);
	*s->n = s->base;
	s->room = s->base;
	buf_release(&s->pend);
	buf_init(&s->pend, max);
	s->phase = LS_START;
	s->in_elem = s->in_str = s->esc = s->need_sep = s->after_sep = false;
	s->scalar = false;
	s->depth = s->idx = s->n_bad = 0;
	s->err = 0;
	s->msg[0] = '\0';
}

static int ls_fail(struct engine_list_stream *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int ls_fail(struct engine_list_stream *s, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
	va_end(ap);
	s->phase = LS_ERR;
	s->err = err;
	return err;
}

/* The element in s->pend is complete: make it a job. */
static int ls_element(struct engine_list_stream *s)
{
	json_error_t jerr;
	char *fixed = NULL;
	size_t flen = 0, n_bad = 0;
	json_t *v;
	int r;

	if (utf8_repair(s->pend.data, s->pend.len, &fixed, &flen, &n_bad))
		return ls_fail(s, -ENOMEM, "out of memory");
	s->n_bad += n_bad;
	v = json_loadb(fixed ? fixed : s->pend.data, fixed ? flen : s->pend.len,
		       JSON_ALLOW_NUL | JSON_DECODE_ANY, &jerr);
	free(fixed);
	if (!v)
		return ls_fail(s, -EPROTO, "not JSON: %s (list entry %zu)",
			       jerr.text, s->idx);
	if (*s->n >= s->room) { /* doubled: amortised */
		size_t more = *s->n < 16 ? 16 : *s->n;

		if (jobs_room(s->jobs, *s->n, more)) {
			json_decref(v);
			return ls_fail(s, -ENOMEM, "out of memory");
		}
		s->room = *s->n + more;
	}
	r = take_job(v, s->idx, s->running, *s->jobs, s->n, s->prev);
	json_decref(v);
	s->idx++;
	s->pend.len = 0;
	s->in_elem = false;
	s->need_sep = true;
	if (r)
		return ls_fail(s, r, "out of memory");
	return 0;
}

/*
 * Bytes of the entry being read, from p[0]: how many belong to it (all of
 * `len` when it goes on), after it is taken when it ended there (*ended);
 * -errno when it is bad.
 */
static ssize_t ls_span(struct engine_list_stream *s, const char *p, size_t len,
		       bool *ended)
{
	size_t i = 0;

	*ended = false;
	for (; i < len; i++) {
		char c = p[i];

		if (s->in_str) {
			if (s->esc)
				s->esc = false;
			else if (c == '\\')
				s->esc = true;
			else if (c == '"') {
				s->in_str = false;
				if (s->scalar && s->depth == 0) {
					i++;
					*ended = true;
					break;
				}
			}
			continue;
		}
		if (s->scalar && s->depth == 0 &&
		    (c == ',' || c == ']' || js_ws(c))) {
			*ended = true; /* c is not the entry's */
			break;
		}
		if (c == '"') {
			s->in_str = true;
		} else if (c == '{' || c == '[') {
			s->depth++;
		} else if (c == '}' || c == ']') {
			if (s->depth == 0)
				return ls_fail(s, -EPROTO,
					       "not JSON: unbalanced '%c' "
					       "(list entry %zu)",
					       c, s->idx);
			if (--s->depth == 0 && !s->scalar) {
				i++;
				*ended = true;
				break;
			}
		}
	}
	if (buf_append(&s->pend, p, i))
		return ls_fail(s, -EFBIG, "list entry %zu over %zu bytes",
			       s->idx, s->pend.max);
	if (*ended) {
		int r = ls_element(s);

		if (r)
			return r;
	}
	return (ssize_t)i;
}

/* One byte of the array outside an entry (phase LS_ARRAY or LS_END); an
 * entry's first byte starts it (ls_span reads it). */
static int ls_byte(struct engine_list_stream *s, char c)
{
	if (s->phase == LS_END)
		return js_ws(c) ? 0
				: ls_fail(s, -EPROTO,
					  "not JSON: text after the list");
	if (js_ws(c))
		return 0;
	if (c == ']' && !s->after_sep) {
		s->phase = LS_END;
		return 0;
	}
	if (s->need_sep) {
		if (c != ',')
			return ls_fail(s, -EPROTO,
				       "not JSON: ',' or ']' expected after "
				       "list entry %zu",
				       s->idx - 1);
		s->need_sep = false;
		s->after_sep = true;
		return 0;
	}
	if (c == ',' || c == ']' || c == '}')
		return ls_fail(s, -EPROTO,
			       "not JSON: '%c' where list entry %zu was "
			       "expected",
			       c, s->idx);
	s->in_elem = true;
	s->after_sep = false;
	s->scalar = c != '{' && c != '[';
	s->depth = 0;
	return 0;
}

int engine_list_stream_feed(struct engine_list_stream *s, const char *p,
			    size_t len)
{
	for (size_t i = 0; i < len; i++) {
		int r;

		switch (s->phase) {
		case LS_ERR:
			return s->err;
		case LS_WHOLE:
			if (buf_append(&s->pend, p + i, len - i))
				return ls_fail(s, -EFBIG,
					       "answer over %zu bytes",
					       s->pend.max);
			return 0;
		case LS_START:
			if (js_ws(p[i]))
				continue;
			if (p[i] != '[') {
				/* kept whole from its first byte: what was
				 * skipped was white space only */
				s->phase = LS_WHOLE;
				i--;
				continue;
			}
			s->phase = LS_ARRAY;
			if (!*s->root) {
				*s->root = json_array();
				if (!*s->root)
					return ls_fail(s, -ENOMEM,
						       "out of memory");
				s->made_root = true;
			}
			continue;
		default:
			if (s->in_elem) {
				bool ended;
				ssize_t k = ls_span(s, p + i, len - i, &ended);

				if (k < 0)
					return (int)k;
				/* on at the first byte not taken (a scalar
				 * entry's end is the separator after it) */
				i += (size_t)k;
				i--; /* the loop's i++ */
				continue;
			}
			r = ls_byte(s, p[i]);
			if (r)
				return r;
			if (s->in_elem)
				i--; /* the entry's first byte: ls_span */
		}
	}
	return s->phase == LS_ERR ? s->err : 0;
}

int engine_list_stream_end(struct engine_list_stream *s, long *total, char *msg,
			   size_t msgsz)
{
	int rc = s->err;

	*total = -1;
	if (msgsz)
		msg[0] = '\0';
	if (s->phase == LS_WHOLE)
		return engine_parse_job_list_prev(
			s->pend.data, s->pend.len, s->running, s->root, s->jobs,
			s->n, total, msg, msgsz, s->prev);
	if (s->phase == LS_START)
		rc = ls_fail(s, -EPROTO, "%s",
			     s->pend.len ? "not JSON" : "empty answer");
	else if (s->phase == LS_ARRAY)
		rc = ls_fail(s, -EPROTO,
			     "not JSON: the list is cut short "
			     "after entry %zu",
			     s->idx);
	if (s->n_bad && !rc)
		log_warn("engine: %zu invalid UTF-8 sequence(s) in an answer "
			 "replaced by U+FFFD",
			 s->n_bad);
	if (rc) {
		for (size_t k = s->base; k < *s->n; k++)
			engine_job_clear(&(*s->jobs)[k]);
		*s->n = s->base;
		buf_fmt(msg, msgsz, "%s", s->msg);
		if (s->made_root) {
			json_decref(*s->root);
			*s->root = NULL;
			s->made_root = false;
		}
	}
	return rc;
}

void engine_list_stream_free(struct engine_list_stream *s)
{
	if (!s)
		return;
	buf_release(&s->pend);
	free(s);
}
