/*
 * awscred — the AWS credential providers and their refresh.  See awscred.h.
 *
 * Threads: ac->lock guards cur, refreshing, next_try_ms, last_err and the
 * detail string; it is never held across a request.  One thread at a time
 * refreshes (refreshing), the others keep using cur while it is usable,
 * or wait on ac->done (monotonic clock) with a deadline.
 */
#include "backends/awscred.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "backends/backend.h"
#include "backends/credcache.h"
#include "backends/http.h"
#include "util/log.h"
#include "util/timefmt.h"

#define AC_MAX_PROV	  8
#define AC_EARLY_MAX_MS	  (300 * 1000) /* refresh at most 5 min early */
#define AC_MIN_LIFE_MS	  2000	       /* a shorter life is taken as this */
#define AC_RETRY_MS	  1000	       /* after a failed refresh */
#define AC_FILE_MAX	  (1 << 20)
#define AC_BODY_MAX	  (64 << 10)
#define AC_IMDS_TTL_S	  "21600"
#define AC_ECS_BASE_DFLT  "http://169.254.170.2"
#define AC_IMDS_BASE_DFLT "http://169.254.169.254"
#define AC_IMDS_CREDS	  "/latest/meta-data/iam/security-credentials/"
#define AC_SLACK_MS	  1000 /* a set this close to its expiry is spent */

enum prov { P_STATIC, P_ENV, P_PROFILE, P_CONTAINER, P_INSTANCE, P_ANON };

static const char *const prov_names[] = {
	[P_STATIC] = "static",	   [P_ENV] = "env",
	[P_PROFILE] = "profile",   [P_CONTAINER] = "container",
	[P_INSTANCE] = "instance", [P_ANON] = "anonymous",
};

/* provider names: stfs's, and the Java classes of the engine's docs */
static const struct {
	const char *name;
	enum prov p[4];
	unsigned n;
} prov_table[] = {
	{"static", {P_STATIC}, 1},
	{"org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
	 {P_STATIC},
	 1},
	{"org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider",
	 {P_STATIC},
	 1},
	{"env", {P_ENV}, 1},
	{"com.amazonaws.auth.EnvironmentVariableCredentialsProvider",
	 {P_ENV},
	 1},
	{"software.amazon.awssdk.auth.credentials."
	 "EnvironmentVariableCredentialsProvider",
	 {P_ENV},
	 1},
	{"profile", {P_PROFILE}, 1},
	{"com.amazonaws.auth.profile.ProfileCredentialsProvider",
	 {P_PROFILE},
	 1},
	{"container", {P_CONTAINER}, 1},
	{"com.amazonaws.auth.ContainerCredentialsProvider", {P_CONTAINER}, 1},
	{"instance", {P_INSTANCE}, 1},
	{"com.amazonaws.auth.InstanceProfileCredentialsProvider",
	 {P_INSTANCE},
	 1},
	/* these two pick the container when its variables are set */
	{"com.amazonaws.auth.EC2ContainerCredentialsProviderWrapper",
	 {P_CONTAINER, P_INSTANCE},
	 2},
	{"org.apache.hadoop.fs.s3a.auth.IAMInstanceCredentialsProvider",
	 {P_CONTAINER, P_INSTANCE},
	 2},
	{"chain", {P_ENV, P_PROFILE, P_CONTAINER, P_INSTANCE}, 4},
	{"com.amazonaws.auth.DefaultAWSCredentialsProviderChain",
	 {P_ENV, P_PROFILE, P_CONTAINER, P_INSTANCE},
	 4},
	{"anonymous", {P_ANON}, 1},
	{"org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider",
	 {P_ANON},
	 1},
};

struct awscred {
	enum prov prov[AC_MAX_PROV];
	unsigned n_prov;
	bool named; /* a provider list was given */
	char *sak, *ssk, *stok;
	const char *static_from; /* static string */
	unsigned timeout_ms, connect_ms;
	char *ca_file, *ecs_base, *imds_base;
	const struct conf_env *env; /* the captured environment, or NULL */

	struct credcache cc;	 /* cc.lock guards the rest */
	struct awscred_set *cur; /* NULL: unsigned */
	int64_t fetched_ms;	 /* monotonic: the last successful fetch */
	int last_err;
	char detail[128]; /* "role NAME", "profile NAME" (no secret) */
};

/* ---- small helpers ---------------------------------------------------- */

void awscred_keys_wipe(struct awscred_keys *k)
{
	secret_free(&k->ak);
	secret_free(&k->sk);
	secret_free(&k->tok);
	k->expires_ms = 0;
}

/* a variable of the environment conf captured (no getenv here) */
static const char *env_get(const struct awscred *ac, const char *name)
{
	return conf_env_get(ac->env, name);
}

/* printable ASCII only: safe in a header and in an "AK:SK" pair */
static bool secret_ok(const char *s, bool colon_ok)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e ||
		    (!colon_ok && *s == ':'))
			return false;
	return true;
}

static void resp_wipe(struct http_resp *r)
{
	if (r->body.data)
		explicit_bzero(r->body.data, r->body.len);
	http_resp_release(r);
}

/* ---- parsers ---------------------------------------------------------- */

static void span_trim(const char **s, const char **e)
{
	while (*s < *e && isspace((unsigned char)**s))
		(*s)++;
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

static bool span_is(const char *s, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(e - s) == n && !memcmp(s, lit, n);
}

/* does the section header [s, e) (inside the brackets) name `profile`? */
static bool section_is(const char *s, const char *e, const char *profile,
		       bool config)
{
	span_trim(&s, &e);
	if (config && strcmp(profile, "default") != 0) {
		if ((size_t)(e - s) < 8 || memcmp(s, "profile", 7) ||
		    !isspace((unsigned char)s[7]))
			return false;
		s += 8;
		span_trim(&s, &e);
	} else if (config && span_is(s, e, "profile default")) {
		return true;
	}
	return span_is(s, e, profile);
}

int awscred_parse_ini(const char *text, size_t len, const char *profile,
		      bool config, struct awscred_keys *k)
{
	const char *p = text, *end = text + len;
	bool any = !profile, in = any;

	memset(k, 0, sizeof(*k));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *ls = p, *eq, *ke, *vs;
		char **dst = NULL;

		p = nl ? nl + 1 : end;
		span_trim(&ls, &le);
		if (ls == le || *ls == '#' || *ls == ';')
			continue;
		if (*ls == '[') {
			const char *rb = memchr(ls, ']', (size_t)(le - ls));

			in = any ||
			     (rb && section_is(ls + 1, rb, profile, config));
			continue;
		}
		if (!in)
			continue;
		eq = memchr(ls, '=', (size_t)(le - ls));
		if (!eq)
			continue;
		ke = eq;
		vs = eq + 1;
		span_trim(&ls, &ke);
		span_trim(&vs, &le);
		if (span_is(ls, ke, "aws_access_key_id"))
			dst = &k->ak;
		else if (span_is(ls, ke, "aws_secret_access_key"))
			dst = &k->sk;
		else if (span_is(ls, ke, "aws_session_token"))
			dst = &k->tok;
		else if (any && span_is(ls, ke, "access_key"))
			dst = &k->ak;
		else if (any && span_is(ls, ke, "secret_key"))
			dst = &k->sk;
		else if (any && span_is(ls, ke, "session_token"))
			dst = &k->tok;
		if (!dst || vs == le || (any && *dst))
			continue;
		secret_free(dst);
		*dst = strndup(vs, (size_t)(le - vs));
		if (!*dst) {
			awscred_keys_wipe(k);
			return -ENOMEM;
		}
	}
	if (!k->ak || !k->sk) {
		awscred_keys_wipe(k);
		return -ENOENT;
	}
	return 0;
}

int awscred_parse_time(const char *s, int64_t *ms)
{
	struct tm tm = {0};
	int y, mo, d, h, mi, sec, n = 0;
	time_t t;
	const char *p;

	if (!s ||
	    sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec,
		   &n) != 6 ||
	    n < 19)
		return -EINVAL;
	if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 ||
	    h > 23 || mi > 59 || sec > 60 || h < 0 || mi < 0 || sec < 0)
		return -EINVAL;
	p = s + n;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			;
	if (!(!strcmp(p, "Z") || !strcmp(p, "+00:00") || !strcmp(p, "UTC")))
		return -EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*ms = (int64_t)t * 1000;
	return 0;
}

static int json_dup(json_t *o, const char *name, char **out)
{
	json_t *v = json_object_get(o, name);

	if (!v)
		return 0;
	if (!json_is_string(v))
		return -EINVAL;
	*out = strdup(json_string_value(v));
	return *out ? 0 : -ENOMEM;
}

int awscred_parse_json(const char *text, size_t len, struct awscred_keys *k)
{
	json_error_t je;
	json_t *o, *code, *exp;
	int rc;

	memset(k, 0, sizeof(*k));
	o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!o)
		return -EINVAL;
	rc = json_is_object(o) ? 0 : -EINVAL;
	code = rc ? NULL : json_object_get(o, "Code");
	if (code && !(json_is_string(code) &&
		      !strcmp(json_string_value(code), "Success")))
		rc = -EINVAL;
	if (!rc)
		rc = json_dup(o, "AccessKeyId", &k->ak);
	if (!rc)
		rc = json_dup(o, "SecretAccessKey", &k->sk);
	if (!rc)
		rc = json_dup(o, "Token", &k->tok);
	exp = rc ? NULL : json_object_get(o, "Expiration");
	if (exp && (!json_is_string(exp) ||
		    awscred_parse_time(json_string_value(exp), &k->expires_ms)))
		rc = -EINVAL;
	if (!rc && (!k->ak || !k->sk))
		rc = -EINVAL;
	json_decref(o); /* the strings inside were secrets: jansson frees */
	if (rc)
		awscred_keys_wipe(k);
	return rc;
}

bool awscred_code_expired(const char *code)
{
	static const char *const codes[] = {
		"ExpiredToken",	  "InvalidToken",	"TokenRefreshRequired",
		"RequestExpired", "InvalidAccessKeyId",
	};

	for (size_t i = 0; code && i < sizeof(codes) / sizeof(codes[0]); i++)
		if (!strcmp(code, codes[i]))
			return true;
	return false;
}

/* ---- sets ------------------------------------------------------------- */

void awscred_put(struct awscred_set *s)
{
	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	secret_free(&s->userpwd);
	secret_free(&s->token_hdr);
	free(s);
}

static struct awscred_set *set_ref(struct awscred_set *s)
{
	if (s)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_ACQ_REL);
	return s;
}

/* a new set (one reference) from `k`, or NULL (logged) */
static struct awscred_set *set_make(const struct awscred_keys *k, enum prov p)
{
	struct awscred_set *s;
	struct buf b;
	int rc;

	if (!secret_ok(k->ak, false) || !secret_ok(k->sk, true) ||
	    (k->tok && !secret_ok(k->tok, true))) {
		log_err("s3: credentials from %s hold a character a request "
			"cannot carry (or ':' in the key id)",
			prov_names[p]);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->refs = 1;
	s->source = prov_names[p];
	buf_init(&b, 8192);
	rc = buf_printf(&b, "%s:%s", k->ak, k->sk);
	s->userpwd = rc ? NULL : buf_detach(&b, NULL);
	if (b.data)
		explicit_bzero(b.data, b.len);
	buf_release(&b);
	if (!rc && k->tok) {
		buf_init(&b, 16384);
		rc = buf_printf(&b, "x-amz-security-token: %s", k->tok);
		s->token_hdr = rc ? NULL : buf_detach(&b, NULL);
		if (b.data)
			explicit_bzero(b.data, b.len);
		buf_release(&b);
	}
	if (rc || !s->userpwd || (k->tok && !s->token_hdr)) {
		s->refs = 1;
		awscred_put(s);
		return NULL;
	}
	if (k->expires_ms) {
		int64_t now = now_ms(), life = k->expires_ms - now, early;

		if (life < AC_MIN_LIFE_MS) {
			log_warn("s3: credentials from %s expire %s (in %lld "
				 "ms): refreshing them every few seconds",
				 prov_names[p],
				 life < 0 ? "in the past" : "soon",
				 (long long)life);
			life = AC_MIN_LIFE_MS;
		}
		early = life / 2 < AC_EARLY_MAX_MS ? life / 2 : AC_EARLY_MAX_MS;
		s->expires_ms = k->expires_ms;
		s->refresh_ms = now + life - early;
	}
	return s;
}

/* ---- providers -------------------------------------------------------- */

static int home_path(const struct awscred *ac, const char *rel, char *out,
		     size_t sz)
{
	const char *home = env_get(ac, "HOME");
	struct passwd pw, *res = NULL;
	char pwbuf[1024];

	if (!home &&
	    getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
		home = res->pw_dir;
	if (!home)
		return -ENOENT;
	return snprintf(out, sz, "%s/%s", home, rel) < (int)sz ? 0
							       : -ENAMETOOLONG;
}

static int from_env(const struct awscred *ac, struct awscred_keys *k)
{
	const char *ak = env_get(ac, "AWS_ACCESS_KEY_ID");
	const char *sk = env_get(ac, "AWS_SECRET_ACCESS_KEY");
	const char *tok = env_get(ac, "AWS_SESSION_TOKEN");

	if (!ak || !sk)
		return -ENOENT;
	k->ak = strdup(ak);
	k->sk = strdup(sk);
	k->tok = tok ? strdup(tok) : NULL;
	if (!k->ak || !k->sk || (tok && !k->tok)) {
		awscred_keys_wipe(k);
		return -ENOMEM;
	}
	return 0;
}

static int from_profile(struct awscred *ac, struct awscred_keys *k)
{
	const char *prof = env_get(ac, "AWS_PROFILE");
	int rc = -ENOENT;

	if (!prof)
		prof = env_get(ac, "AWS_DEFAULT_PROFILE");
	if (!prof)
		prof = "default";
	for (int i = 0; i < 2 && rc == -ENOENT; i++) {
		const char *path =
			env_get(ac, i ? "AWS_CONFIG_FILE"
				      : "AWS_SHARED_CREDENTIALS_FILE");
		char def[4096], *text = NULL;
		size_t len = 0;

		if (!path) {
			if (home_path(ac,
				      i ? ".aws/config" : ".aws/credentials",
				      def, sizeof(def)) < 0)
				continue;
			path = def;
		}
		rc = secret_file_read("s3", path, AC_FILE_MAX, &text, &len);
		if (rc == 0) {
			rc = awscred_parse_ini(text, len, prof, i == 1, k);
			explicit_bzero(text, len);
			free(text);
		} else if (rc != -ENOENT && rc != -EACCES && rc != -EINVAL) {
			log_err("s3: %s: %s", path, strerror(-rc));
		}
	}
	if (rc == 0) {
		pthread_mutex_lock(&ac->cc.lock);
		snprintf(ac->detail, sizeof(ac->detail), "profile %.100s",
			 prof);
		pthread_mutex_unlock(&ac->cc.lock);
	}
	return rc;
}

/* one metadata request: 0 with a 2xx answer in resp, else -errno (logged) */
static int md_request(struct awscred *ac, const char *what, const char *method,
		      const char *url, const char *const *hdrs,
		      struct http_resp *resp)
{
	char safe[256];
	struct http_req req = {
		.method = method,
		.url = url,
		.headers = hdrs,
		.timeout_ms = ac->timeout_ms,
		.connect_timeout_ms = ac->connect_ms,
		.retries = 1,
		.max_body = AC_BODY_MAX,
		.ca_file = ac->ca_file,
	};
	int rc = http_perform(&req, resp);

	if (rc == 0 && resp->status >= 200 && resp->status < 300)
		return 0;
	http_redact_url(url, safe, sizeof(safe));
	if (rc < 0) {
		log_warn("s3: %s: %s: %s", what, safe,
			 resp->error[0] ? resp->error : strerror(-rc));
		return rc;
	}
	log_warn("s3: %s: %s: HTTP %ld", what, safe, resp->status);
	return resp->status == 404 ? -ENOENT : -EACCES;
}

/* http://HOST must be a loopback or the ECS/EKS link-local agent */
static bool full_uri_ok(const char *u)
{
	static const char *const hosts[] = {
		"127.",		 "localhost",	   "[::1]",
		"169.254.170.2", "169.254.170.23", "[fd00:ec2::23]",
	};
	const char *h;
	size_t hl;

	if (!strncasecmp(u, "https://", 8))
		return true;
	if (strncasecmp(u, "http://", 7))
		return false;
	h = u + 7;
	hl = strcspn(h, "/?#");
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		size_t n = strlen(hosts[i]);

		if (hl < n || strncasecmp(h, hosts[i], n))
			continue;
		if (hosts[i][n - 1] == '.')
			return true; /* 127.x.y.z */
		if (hl == n || h[n] == ':')
			return true;
	}
	return false;
}

static int from_container(struct awscred *ac, struct awscred_keys *k)
{
	const char *rel = env_get(ac, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const char *full = env_get(ac, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
	const char *tokfile =
		env_get(ac, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *tok = env_get(ac, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
	char *ftok = NULL, *auth = NULL;
	const char *hdrs[2] = {NULL, NULL};
	struct http_resp resp;
	struct buf url, ah;
	size_t flen = 0;
	int rc;

	if (!rel && !full)
		return -ENOENT;
	buf_init(&url, 8192);
	if (rel) {
		if (rel[0] != '/') {
			log_err("s3: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI "
				"does not start with '/'");
			buf_release(&url);
			return -EINVAL;
		}
		rc = buf_printf(&url, "%s%s", ac->ecs_base, rel);
	} else if (!full_uri_ok(full)) {
		log_err("s3: AWS_CONTAINER_CREDENTIALS_FULL_URI must be https, "
			"or http to a loopback address or the container "
			"agent");
		buf_release(&url);
		return -EINVAL;
	} else {
		rc = buf_puts(&url, full);
	}
	if (rc) {
		buf_release(&url);
		return -EINVAL;
	}
	if (tokfile) {
		/* a token file is written by the agent, often 0644 */
		int fd = open(tokfile, O_RDONLY | O_CLOEXEC);
		char tb[8192];
		ssize_t r = fd < 0 ? -1 : read(fd, tb, sizeof(tb) - 1);

		if (fd >= 0)
			close(fd);
		if (r < 0) {
			log_err("s3: AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE "
				"'%s' cannot be read",
				tokfile);
			buf_release(&url);
			return -EACCES;
		}
		while (r > 0 && isspace((unsigned char)tb[r - 1]))
			r--;
		tb[r] = '\0';
		ftok = strdup(tb);
		explicit_bzero(tb, sizeof(tb));
		if (!ftok) {
			buf_release(&url);
			return -ENOMEM;
		}
		tok = ftok;
		flen = strlen(ftok);
	}
	if (tok) {
		for (const char *c = tok; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f) {
				log_err("s3: the container authorization "
					"token holds a control character");
				secret_free(&ftok);
				buf_release(&url);
				return -EINVAL;
			}
		buf_init(&ah, 16384);
		rc = buf_printf(&ah, "Authorization: %s", tok);
		auth = rc ? NULL : buf_detach(&ah, NULL);
		if (ah.data)
			explicit_bzero(ah.data, ah.len);
		buf_release(&ah);
		hdrs[0] = auth;
	}
	(void)flen;
	secret_free(&ftok);
	http_resp_init(&resp);
	rc = tok && !auth ? -ENOMEM
			  : md_request(ac, "container credentials", "GET",
				       url.data, hdrs, &resp);
	secret_free(&auth);
	if (rc == 0) {
		rc = awscred_parse_json(resp.body.data, resp.body.len, k);
		if (rc == -EINVAL)
			log_warn("s3: container credentials: the answer is "
				 "not a credentials document");
	}
	resp_wipe(&resp);
	buf_release(&url);
	if (rc == 0) {
		pthread_mutex_lock(&ac->cc.lock);
		snprintf(ac->detail, sizeof(ac->detail), "%s",
			 rel ? "ECS task role" : "container endpoint");
		pthread_mutex_unlock(&ac->cc.lock);
	}
	return rc == -ENOENT ? -EACCES : rc;
}

static bool role_ok(const char *r)
{
	if (!*r || strlen(r) > 64)
		return false;
	for (; *r; r++)
		if (!isalnum((unsigned char)*r) && !strchr("+=,.@_-", *r))
			return false;
	return true;
}

static int from_instance(struct awscred *ac, struct awscred_keys *k)
{
	char url[1024], role[80], *tokhdr = NULL;
	const char *hdrs[2] = {NULL, NULL};
	const char *put_hdrs[2] = {
		"X-aws-ec2-metadata-token-ttl-seconds: " AC_IMDS_TTL_S, NULL};
	struct http_resp resp;
	size_t n;
	int rc;

	/* IMDSv2: a session token first */
	snprintf(url, sizeof(url), "%s/latest/api/token", ac->imds_base);
	http_resp_init(&resp);
	rc = md_request(ac, "instance metadata token", "PUT", url, put_hdrs,
			&resp);
	if (rc == 0) {
		struct buf b;

		buf_init(&b, 8192);
		if (!secret_ok(resp.body.data, true) ||
		    buf_printf(&b, "X-aws-ec2-metadata-token: %s",
			       resp.body.data))
			rc = -EACCES;
		tokhdr = rc ? NULL : buf_detach(&b, NULL);
		if (b.data)
			explicit_bzero(b.data, b.len);
		buf_release(&b);
		hdrs[0] = tokhdr;
	} else if (rc == -ENOENT || rc == -EACCES) {
		/* an IMDSv1-only service: go on without a token */
		if (resp.status != 403 && resp.status != 401)
			rc = 0;
	}
	resp_wipe(&resp);
	if (rc < 0) {
		secret_free(&tokhdr);
		return rc == -ENOENT ? -EACCES : rc;
	}
	snprintf(url, sizeof(url), "%s" AC_IMDS_CREDS, ac->imds_base);
	http_resp_init(&resp);
	rc = md_request(ac, "instance role", "GET", url, hdrs, &resp);
	if (rc == 0) {
		const char *b = resp.body.data ? resp.body.data : "";

		n = strcspn(b, "\r\n");
		if (n >= sizeof(role))
			n = 0;
		memcpy(role, b, n);
		role[n] = '\0';
		if (!role_ok(role)) {
			log_warn("s3: instance metadata: no usable role name "
				 "(is an instance profile attached?)");
			rc = -EACCES;
		}
	}
	resp_wipe(&resp);
	if (rc == 0) {
		snprintf(url, sizeof(url), "%s" AC_IMDS_CREDS "%s",
			 ac->imds_base, role);
		http_resp_init(&resp);
		rc = md_request(ac, "instance role credentials", "GET", url,
				hdrs, &resp);
		if (rc == 0) {
			rc = awscred_parse_json(resp.body.data, resp.body.len,
						k);
			if (rc == -EINVAL)
				log_warn("s3: instance metadata: role '%s': "
					 "the answer is not a credentials "
					 "document",
					 role);
		}
		resp_wipe(&resp);
	}
	secret_free(&tokhdr);
	if (rc == 0) {
		pthread_mutex_lock(&ac->cc.lock);
		snprintf(ac->detail, sizeof(ac->detail), "role %s", role);
		pthread_mutex_unlock(&ac->cc.lock);
	}
	return rc == -ENOENT ? -EACCES : rc;
}

static int from_static(struct awscred *ac, struct awscred_keys *k)
{
	if (!ac->sak || !ac->ssk)
		return -ENOENT;
	k->ak = strdup(ac->sak);
	k->sk = strdup(ac->ssk);
	k->tok = ac->stok ? strdup(ac->stok) : NULL;
	if (!k->ak || !k->sk || (ac->stok && !k->tok)) {
		awscred_keys_wipe(k);
		return -ENOMEM;
	}
	pthread_mutex_lock(&ac->cc.lock);
	snprintf(ac->detail, sizeof(ac->detail), "%s",
		 ac->static_from ? ac->static_from : "");
	pthread_mutex_unlock(&ac->cc.lock);
	return 0;
}

/* is this host an EC2 instance, by its DMI data (no request made)? */
static bool on_ec2(void)
{
	static const char *const files[] = {
		"/sys/devices/virtual/dmi/id/sys_vendor",
		"/sys/devices/virtual/dmi/id/board_asset_tag",
		"/sys/devices/virtual/dmi/id/product_uuid",
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char b[64] = "";
		int fd = open(files[i], O_RDONLY | O_CLOEXEC);
		ssize_t r = fd < 0 ? -1 : read(fd, b, sizeof(b) - 1);

		if (fd >= 0)
			close(fd);
		if (r <= 0)
			continue;
		b[r] = '\0';
		if ((i == 0 && !strncmp(b, "Amazon EC2", 10)) ||
		    (i == 1 && !strncmp(b, "i-", 2)) ||
		    (i == 2 && !strncasecmp(b, "ec2", 3)))
			return true;
	}
	return false;
}

static bool imds_disabled(const struct awscred *ac)
{
	const char *v = env_get(ac, "AWS_EC2_METADATA_DISABLED");

	return v && !strcasecmp(v, "true");
}

/*
 * Try the providers in order, without the lock.  0 with *k and *from set;
 * -ENOENT when none is there (the default chain then goes unsigned);
 * else the first real failure.
 */
static int fetch(struct awscred *ac, struct awscred_keys *k, enum prov *from)
{
	int first_err = 0;

	for (unsigned i = 0; i < ac->n_prov; i++) {
		enum prov p = ac->prov[i];
		int rc = -ENOENT;

		memset(k, 0, sizeof(*k));
		switch (p) {
		case P_STATIC:
			rc = from_static(ac, k);
			break;
		case P_ENV:
			rc = from_env(ac, k);
			break;
		case P_PROFILE:
			rc = from_profile(ac, k);
			break;
		case P_CONTAINER:
			rc = from_container(ac, k);
			break;
		case P_INSTANCE:
			if (imds_disabled(ac))
				rc = -ENOENT;
			else if (ac->named ||
				 env_get(ac, "AWS_EC2_METADATA_SERVICE_"
					     "ENDPOINT") ||
				 on_ec2() ||
				 strcmp(ac->imds_base, AC_IMDS_BASE_DFLT))
				rc = from_instance(ac, k);
			break;
		case P_ANON:
			*from = P_ANON;
			return 0;
		}
		if (rc == 0) {
			*from = p;
			return 0;
		}
		if (rc != -ENOENT && !first_err)
			first_err = rc;
	}
	return first_err ? first_err : -ENOENT;
}

/* ---- open / close ----------------------------------------------------- */

static int parse_providers(struct awscred *ac, const char *list)
{
	const char *p = list;

	while (*p) {
		const char *s = p, *e;
		bool found = false;

		p += strcspn(p, ",");
		e = p;
		if (*p)
			p++;
		span_trim(&s, &e);
		if (s == e)
			continue;
		for (size_t i = 0;
		     i < sizeof(prov_table) / sizeof(prov_table[0]); i++) {
			if (!span_is(s, e, prov_table[i].name))
				continue;
			found = true;
			for (unsigned j = 0; j < prov_table[i].n; j++) {
				if (ac->n_prov >= AC_MAX_PROV)
					break;
				ac->prov[ac->n_prov++] = prov_table[i].p[j];
			}
		}
		if (!found) {
			log_err("s3: unknown credentials provider '%.*s' "
				"(known: static, env, profile, container, "
				"instance, chain, anonymous, or the AWS SDK / "
				"Hadoop S3A class names of the engine's docs)",
				(int)(e - s > 120 ? 120 : e - s), s);
			return -EINVAL;
		}
	}
	return 0;
}

static int dup_opt(const char *v, char **out)
{
	*out = NULL;
	if (!v || !*v)
		return 0;
	*out = strdup(v);
	return *out ? 0 : -ENOMEM;
}

void awscred_close(struct awscred *ac)
{
	if (!ac)
		return;
	awscred_put(ac->cur);
	secret_free(&ac->sak);
	secret_free(&ac->ssk);
	secret_free(&ac->stok);
	free(ac->ca_file);
	free(ac->ecs_base);
	free(ac->imds_base);
	credcache_destroy(&ac->cc);
	free(ac);
}

/* with the lock held: make `k` (from `p`) the current set */
static int install(struct awscred *ac, const struct awscred_keys *k,
		   enum prov p)
{
	struct awscred_set *s = p == P_ANON ? NULL : set_make(k, p);

	if (p != P_ANON && !s)
		return -EACCES;
	awscred_put(ac->cur);
	ac->cur = s;
	ac->fetched_ms = mono_ms();
	if (p == P_ANON)
		snprintf(ac->detail, sizeof(ac->detail), "unsigned requests");
	return 0;
}

int awscred_open(const struct awscred_conf *c, struct awscred **out)
{
	struct awscred *ac = calloc(1, sizeof(*ac));
	const char *imds =
		conf_env_get(c->env, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
	struct awscred_keys k = {0};
	enum prov from = P_ANON;
	int rc;

	*out = NULL;
	if (!ac)
		return -ENOMEM;
	rc = credcache_init(&ac->cc);
	if (rc) {
		free(ac);
		return rc;
	}
	ac->env = c->env;
	ac->timeout_ms = c->timeout_ms ? c->timeout_ms : 2000;
	ac->connect_ms = c->connect_ms;
	ac->static_from = c->static_from;
	if (c->imds_base)
		imds = c->imds_base;
	rc = dup_opt(c->access_key, &ac->sak);
	if (!rc)
		rc = dup_opt(c->secret_key, &ac->ssk);
	if (!rc)
		rc = dup_opt(c->session_token, &ac->stok);
	if (!rc)
		rc = dup_opt(c->ca_file, &ac->ca_file);
	if (!rc)
		rc = dup_opt(c->ecs_base ? c->ecs_base : AC_ECS_BASE_DFLT,
			     &ac->ecs_base);
	if (!rc)
		rc = dup_opt(imds ? imds : AC_IMDS_BASE_DFLT, &ac->imds_base);
	if (!rc && ac->imds_base) {
		size_t n = strlen(ac->imds_base);

		while (n > 1 && ac->imds_base[n - 1] == '/')
			ac->imds_base[--n] = '\0';
	}
	if (!rc && c->provider && *c->provider) {
		ac->named = true;
		rc = parse_providers(ac, c->provider);
		if (!rc && !ac->n_prov) {
			log_err("s3: the credentials provider list is empty");
			rc = -EINVAL;
		}
	} else if (!rc) {
		/* the default chain; env is already among the static keys */
		static const enum prov dflt[] = {P_STATIC, P_ENV, P_PROFILE,
						 P_CONTAINER, P_INSTANCE};

		memcpy(ac->prov, dflt, sizeof(dflt));
		ac->n_prov = sizeof(dflt) / sizeof(dflt[0]);
	}
	if (rc) {
		awscred_close(ac);
		return rc;
	}
	rc = fetch(ac, &k, &from);
	if (rc == -ENOENT && !ac->named) {
		from = P_ANON;
		rc = 0;
	}
	if (rc == 0) {
		pthread_mutex_lock(&ac->cc.lock);
		rc = install(ac, &k, from);
		pthread_mutex_unlock(&ac->cc.lock);
	}
	awscred_keys_wipe(&k);
	if (rc) {
		log_err("s3: no credentials from %s%s",
			ac->named ? "the provider(s) " : "the default chain",
			ac->named ? c->provider : "");
		awscred_close(ac);
		return rc == -ENOMEM || rc == -EINVAL ? rc : -EACCES;
	}
	*out = ac;
	return 0;
}

/* ---- get / refresh ---------------------------------------------------- */

/* can the current set come from a provider that gives new ones? */
static bool refreshable(enum prov p)
{
	return p != P_STATIC && p != P_ANON;
}

static enum prov set_prov(const struct awscred_set *s)
{
	for (unsigned i = 0; i < sizeof(prov_names) / sizeof(prov_names[0]);
	     i++)
		if (s && s->source == prov_names[i])
			return (enum prov)i;
	return P_ANON;
}

int awscred_get(struct awscred *ac, struct awscred_set **out)
{
	int64_t deadline = mono_ms() + 3 * (int64_t)ac->timeout_ms + 500;
	bool tried = false;
	int rc = 0, a;

	*out = NULL;
	pthread_mutex_lock(&ac->cc.lock);
	for (;;) {
		struct awscred_set *s = ac->cur;
		int64_t now = now_ms();
		bool bad = s && __atomic_load_n(&s->bad, __ATOMIC_ACQUIRE);
		bool usable =
			s && !bad &&
			(!s->expires_ms || now < s->expires_ms - AC_SLACK_MS ||
			 now < s->refresh_ms);
		bool due = bad || (s && s->refresh_ms && now >= s->refresh_ms);

		if (!s || !refreshable(set_prov(s)))
			usable = true, due = false; /* never refreshed */
		a = credcache_step(&ac->cc, usable, due, &tried, deadline);
		if (a == CC_FETCH) {
			struct awscred_keys k = {0};
			enum prov from = P_ANON;

			pthread_mutex_unlock(&ac->cc.lock);
			rc = fetch(ac, &k, &from);
			pthread_mutex_lock(&ac->cc.lock);
			if (rc == 0 && from == P_ANON)
				rc = -EACCES; /* never swap signed for none */
			if (rc == 0)
				rc = install(ac, &k, from);
			awscred_keys_wipe(&k);
			if (rc) {
				ac->last_err = rc == -ENOENT ? -EACCES : rc;
				log_warn("s3: refreshing the credentials "
					 "failed%s",
					 usable ? "; the current ones are "
						  "still used"
						: "");
			}
			credcache_done(&ac->cc, rc == 0);
			continue;
		}
		if (a == CC_AGAIN)
			continue;
		if (a == CC_USE) {
			*out = set_ref(ac->cur);
			rc = 0;
		} else {
			rc = a == -EACCES && ac->last_err ? ac->last_err : a;
		}
		break;
	}
	pthread_mutex_unlock(&ac->cc.lock);
	return rc;
}

bool awscred_refused(struct awscred *ac, struct awscred_set *s)
{
	bool worth = false;

	if (!s || !refreshable(set_prov(s)))
		return false;
	pthread_mutex_lock(&ac->cc.lock);
	if (ac->cur != s) {
		worth = true; /* already replaced: try the new ones */
	} else if (mono_ms() - ac->fetched_ms >= CREDCACHE_RETRY_MS) {
		__atomic_store_n(&s->bad, true, __ATOMIC_RELEASE);
		worth = true;
	}
	pthread_mutex_unlock(&ac->cc.lock);
	return worth;
}

int awscred_describe(struct awscred *ac, struct buf *out)
{
	char when[40] = "never";
	char detail[sizeof(ac->detail)];
	const char *src;
	int64_t exp = 0;

	pthread_mutex_lock(&ac->cc.lock);
	src = ac->cur ? ac->cur->source : "anonymous";
	if (ac->cur)
		exp = ac->cur->expires_ms;
	memcpy(detail, ac->detail, sizeof(detail));
	pthread_mutex_unlock(&ac->cc.lock);
	if (exp)
		timefmt_iso_ms(exp, when, sizeof(when));
	return buf_printf(
		out, "credentials = %s%s%s%s\ncredentials_expire = %s\n", src,
		detail[0] ? " (" : "", detail, detail[0] ? ")" : "", when);
}
