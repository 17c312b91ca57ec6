/*
 * gcsauth — OAuth2 tokens for GCS.  See gcsauth.h.
 *
 * Threads: ga->lock guards token, its times, refreshing, bad and
 * next_try_ms; it is never held across a request.
 */
#include "backends/gcsauth.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "backends/backend.h"
#include "backends/credcache.h"
#include "backends/http.h"
#include "util/log.h"
#include "util/timefmt.h"

#define GA_SCOPE     "https://www.googleapis.com/auth/devstorage.read_write"
#define GA_TOKEN_URI "https://oauth2.googleapis.com/token"
#define GA_MD_DFLT   "http://metadata.google.internal"
#define GA_MD_PATH   "/computeMetadata/v1/instance/service-accounts/default/token"
#define GA_EARLY_MAX (300 * 1000)
#define GA_RETRY_MS  1000
#define GA_FILE_MAX  (64 << 10)
#define GA_GRANT     "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"

struct gcsauth {
	bool use_key;
	struct gcs_sa sa;
	char *md_base, *ca_file;
	unsigned timeout_ms, connect_ms;
	char detail[200];

	struct credcache cc; /* cc.lock guards the rest */
	char *token;
	int64_t exp_ms, refresh_ms; /* wall clock */
	int64_t fetched_ms;	    /* monotonic */
	bool bad;
};

void gcs_sa_wipe(struct gcs_sa *sa)
{
	secret_free(&sa->email);
	secret_free(&sa->private_key);
	secret_free(&sa->token_uri);
}

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

int gcsauth_parse_key(const char *text, size_t len, struct gcs_sa *sa)
{
	json_error_t je;
	json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	const char *type, *email, *pk, *uri;
	int rc = -EINVAL;

	memset(sa, 0, sizeof(*sa));
	if (!json_is_object(o))
		goto out;
	type = jstr(o, "type");
	email = jstr(o, "client_email");
	pk = jstr(o, "private_key");
	uri = jstr(o, "token_uri");
	if (!type || strcmp(type, "service_account") || !email || !*email ||
	    !pk || !strstr(pk, "-----BEGIN") ||
	    (uri && strncmp(uri, "http", 4)))
		goto out;
	sa->email = strdup(email);
	sa->private_key = strdup(pk);
	sa->token_uri = strdup(uri ? uri : GA_TOKEN_URI);
	rc = sa->email && sa->private_key && sa->token_uri ? 0 : -ENOMEM;
out:
	json_decref(o);
	if (rc)
		gcs_sa_wipe(sa);
	return rc;
}

int gcsauth_parse_token(const char *text, size_t len, char **token,
			int64_t *expires_in_s)
{
	json_error_t je;
	json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	const char *tok, *type;
	json_t *ei;
	int rc = -EINVAL;

	*token = NULL;
	if (!json_is_object(o))
		goto out;
	tok = jstr(o, "access_token");
	type = jstr(o, "token_type");
	ei = json_object_get(o, "expires_in");
	if (!tok || !*tok || (type && strcasecmp(type, "Bearer")) ||
	    !json_is_integer(ei) || json_integer_value(ei) <= 0)
		goto out;
	for (const char *c = tok; *c; c++)
		if ((unsigned char)*c < 0x21 || (unsigned char)*c > 0x7e)
			goto out;
	*expires_in_s = (int64_t)json_integer_value(ei);
	*token = strdup(tok);
	rc = *token ? 0 : -ENOMEM;
out:
	json_decref(o);
	return rc;
}

/* base64url without padding of n bytes, appended to b */
static int b64url(struct buf *b, const void *p, size_t n)
{
	size_t cap = 4 * ((n + 2) / 3) + 1;
	unsigned char *t = malloc(cap);
	int len, rc;

	if (!t)
		return -ENOMEM;
	len = EVP_EncodeBlock(t, p, (int)n);
	while (len > 0 && t[len - 1] == '=')
		len--;
	for (int i = 0; i < len; i++)
		t[i] = t[i] == '+' ? '-' : t[i] == '/' ? '_' : t[i];
	rc = buf_append(b, t, (size_t)len);
	explicit_bzero(t, cap);
	free(t);
	return rc;
}

int gcsauth_jwt(const struct gcs_sa *sa, const char *scope, int64_t now_s,
		char **jwt)
{
	static const char hdr[] = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
	unsigned char *sig = NULL;
	size_t siglen = 0;
	EVP_PKEY *pk = NULL;
	EVP_MD_CTX *md = NULL;
	json_t *claims;
	char *cj = NULL;
	BIO *bio;
	struct buf b;
	int rc;

	*jwt = NULL;
	claims =
		json_pack("{s:s, s:s, s:s, s:I, s:I}", "iss", sa->email,
			  "scope", scope, "aud", sa->token_uri, "iat",
			  (json_int_t)now_s, "exp", (json_int_t)(now_s + 3600));
	cj = claims ? json_dumps(claims, JSON_COMPACT) : NULL;
	json_decref(claims);
	if (!cj)
		return -ENOMEM;
	buf_init(&b, 16384);
	rc = b64url(&b, hdr, strlen(hdr));
	if (!rc)
		rc = buf_puts(&b, ".");
	if (!rc)
		rc = b64url(&b, cj, strlen(cj));
	free(cj);
	bio = rc ? NULL : BIO_new_mem_buf(sa->private_key, -1);
	pk = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
	BIO_free(bio);
	if (!rc && (!pk || EVP_PKEY_base_id(pk) != EVP_PKEY_RSA))
		rc = -EINVAL;
	md = rc ? NULL : EVP_MD_CTX_new();
	if (!rc && !md)
		rc = -ENOMEM;
	if (!rc && (EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, pk) != 1 ||
		    EVP_DigestSign(md, NULL, &siglen, (unsigned char *)b.data,
				   b.len) != 1))
		rc = -EINVAL;
	sig = rc ? NULL : malloc(siglen);
	if (!rc && !sig)
		rc = -ENOMEM;
	if (!rc && EVP_DigestSign(md, sig, &siglen, (unsigned char *)b.data,
				  b.len) != 1)
		rc = -EINVAL;
	if (!rc)
		rc = buf_puts(&b, ".");
	if (!rc)
		rc = b64url(&b, sig, siglen);
	free(sig);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pk);
	if (!rc)
		*jwt = buf_detach(&b, NULL);
	if (b.data)
		explicit_bzero(b.data, b.len);
	buf_release(&b);
	return rc ? rc : *jwt ? 0 : -ENOMEM;
}

/* ---- fetching a token ------------------------------------------------- */

static int post_or_get(struct gcsauth *ga, const char *method, const char *url,
		       const char *const *hdrs, const char *body,
		       struct http_resp *resp)
{
	char safe[256];
	struct http_req req = {
		.method = method,
		.url = url,
		.headers = hdrs,
		.body = body,
		.body_len = body ? strlen(body) : 0,
		.timeout_ms = ga->timeout_ms,
		.connect_timeout_ms = ga->connect_ms,
		.retries = 1,
		.max_body = 64 << 10,
		.ca_file = ga->ca_file,
	};
	int rc = http_perform(&req, resp);

	if (rc == 0 && resp->status == 200)
		return 0;
	http_redact_url(url, safe, sizeof(safe));
	if (rc < 0)
		log_warn("gcs: token from %s: %s", safe,
			 resp->error[0] ? resp->error : strerror(-rc));
	else
		log_warn("gcs: token from %s: HTTP %ld", safe, resp->status);
	return rc < 0 ? rc : -EACCES;
}

static int fetch(struct gcsauth *ga, char **tok, int64_t *ei)
{
	struct http_resp resp;
	char *jwt = NULL, *body = NULL;
	struct buf b;
	int rc;

	*tok = NULL;
	http_resp_init(&resp);
	if (ga->use_key) {
		static const char *const h[] = {
			"Content-Type: application/x-www-form-urlencoded",
			NULL};

		rc = gcsauth_jwt(&ga->sa, GA_SCOPE, now_ms() / 1000, &jwt);
		if (rc == -EINVAL)
			log_err("gcs: the service-account key of %s does not "
				"load as an RSA private key",
				ga->sa.email);
		buf_init(&b, 32768);
		if (!rc)
			rc = buf_printf(&b, "grant_type=%s&assertion=%s",
					GA_GRANT, jwt);
		body = rc ? NULL : buf_detach(&b, NULL);
		if (b.data)
			explicit_bzero(b.data, b.len);
		buf_release(&b);
		secret_free(&jwt);
		if (!rc && !body)
			rc = -ENOMEM;
		if (!rc)
			rc = post_or_get(ga, "POST", ga->sa.token_uri, h, body,
					 &resp);
		secret_free(&body);
	} else {
		static const char *const h[] = {"Metadata-Flavor: Google",
						NULL};
		char url[600];

		snprintf(url, sizeof(url), "%s" GA_MD_PATH, ga->md_base);
		rc = post_or_get(ga, "GET", url, h, NULL, &resp);
	}
	if (!rc) {
		rc = gcsauth_parse_token(resp.body.data, resp.body.len, tok,
					 ei);
		if (rc == -EINVAL)
			log_warn("gcs: the token endpoint's answer is not a "
				 "token");
	}
	if (resp.body.data)
		explicit_bzero(resp.body.data, resp.body.len);
	http_resp_release(&resp);
	return rc == -EINVAL ? -EACCES : rc;
}

/* with the lock held: install a fresh token */
static void install(struct gcsauth *ga, char *tok, int64_t ei)
{
	int64_t life = ei * 1000, early = life / 2;

	if (early > GA_EARLY_MAX)
		early = GA_EARLY_MAX;
	secret_free(&ga->token);
	ga->token = tok;
	ga->exp_ms = now_ms() + life;
	ga->refresh_ms = ga->exp_ms - early;
	ga->fetched_ms = mono_ms();
	ga->bad = false;
}

/* ---- open / close ----------------------------------------------------- */

static int read_key(const char *path, struct gcs_sa *sa)
{
	char *text = NULL;
	size_t n = 0;
	int rc = secret_file_read("gcs", path, GA_FILE_MAX, &text, &n);

	if (rc < 0) {
		if (rc != -EACCES && rc != -EINVAL)
			log_err("gcs: service-account key '%s': %s", path,
				strerror(-rc));
		return rc == -ENOENT ? -EINVAL : rc;
	}
	rc = gcsauth_parse_key(text, n, sa);
	explicit_bzero(text, n);
	free(text);
	if (rc == -EINVAL)
		log_err("gcs: '%s' is not a service-account JSON key (type, "
			"client_email, private_key)",
			path);
	return rc;
}

static bool on_gce(void)
{
	char b[64] = "";
	int fd = open("/sys/class/dmi/id/product_name", O_RDONLY | O_CLOEXEC);
	ssize_t r = fd < 0 ? -1 : read(fd, b, sizeof(b) - 1);

	if (fd >= 0)
		close(fd);
	return r > 0 && !strncmp(b, "Google", 6);
}

void gcsauth_close(struct gcsauth *ga)
{
	if (!ga)
		return;
	gcs_sa_wipe(&ga->sa);
	secret_free(&ga->token);
	free(ga->md_base);
	free(ga->ca_file);
	credcache_destroy(&ga->cc);
	free(ga);
}

int gcsauth_open(const struct gcsauth_conf *c, struct gcsauth **out)
{
	const char *kf = c->keyfile && *c->keyfile ? c->keyfile : NULL;
	const char *mdh = conf_env_get(c->env, "GCE_METADATA_HOST");
	struct gcsauth *ga;
	char *tok = NULL;
	int64_t ei = 0;
	int rc;

	*out = NULL;
	if (!kf) {
		kf = conf_env_get(c->env, "GOOGLE_APPLICATION_CREDENTIALS");
	}
	if (!kf && !c->metadata_base && !(mdh && *mdh) && !on_gce())
		return -ENOENT;
	ga = calloc(1, sizeof(*ga));
	if (!ga)
		return -ENOMEM;
	if (credcache_init(&ga->cc)) {
		free(ga);
		return -ENOMEM;
	}
	ga->timeout_ms = c->timeout_ms ? c->timeout_ms : 3000;
	ga->connect_ms = c->connect_ms;
	ga->ca_file = c->ca_file ? strdup(c->ca_file) : NULL;
	if (kf) {
		ga->use_key = true;
		rc = read_key(kf, &ga->sa);
		if (!rc)
			snprintf(ga->detail, sizeof(ga->detail),
				 "service account %.150s", ga->sa.email);
	} else {
		struct buf b;

		buf_init(&b, 1024);
		if (c->metadata_base)
			rc = buf_puts(&b, c->metadata_base);
		else if (mdh && *mdh)
			rc = buf_printf(&b, "http://%s", mdh);
		else
			rc = buf_puts(&b, GA_MD_DFLT);
		ga->md_base = rc ? NULL : buf_detach(&b, NULL);
		buf_release(&b);
		rc = ga->md_base ? 0 : -ENOMEM;
		snprintf(ga->detail, sizeof(ga->detail),
			 "metadata server, default service account");
	}
	if (!rc)
		rc = fetch(ga, &tok, &ei);
	if (rc) {
		log_err("gcs: no access token (%s)", strerror(-rc));
		gcsauth_close(ga);
		return rc == -ENOMEM || rc == -EINVAL ? rc : -EACCES;
	}
	install(ga, tok, ei);
	*out = ga;
	return 0;
}

/* ---- use -------------------------------------------------------------- */

static int make_hdr(const char *tok, char **hdr)
{
	struct buf b;
	int rc;

	buf_init(&b, 16384);
	rc = buf_printf(&b, "Authorization: Bearer %s", tok);
	*hdr = rc ? NULL : buf_detach(&b, NULL);
	if (b.data)
		explicit_bzero(b.data, b.len);
	buf_release(&b);
	return *hdr ? 0 : -ENOMEM;
}

int gcsauth_header(struct gcsauth *ga, char **hdr)
{
	int64_t deadline = mono_ms() + 2 * (int64_t)ga->timeout_ms + 500;
	bool tried = false;
	int rc = 0, a;

	*hdr = NULL;
	pthread_mutex_lock(&ga->cc.lock);
	for (;;) {
		int64_t now = now_ms();
		bool usable = ga->token && !ga->bad && now < ga->exp_ms - 1000;
		bool due = ga->bad || now >= ga->refresh_ms;

		a = credcache_step(&ga->cc, usable, due, &tried, deadline);
		if (a == CC_FETCH) {
			char *tok = NULL;
			int64_t ei = 0;

			pthread_mutex_unlock(&ga->cc.lock);
			rc = fetch(ga, &tok, &ei);
			pthread_mutex_lock(&ga->cc.lock);
			if (rc == 0)
				install(ga, tok, ei);
			else
				log_warn("gcs: refreshing the token failed%s",
					 usable ? "; the current one is still "
						  "used"
						: "");
			credcache_done(&ga->cc, rc == 0);
			continue;
		}
		if (a == CC_AGAIN)
			continue;
		rc = a == CC_USE	  ? make_hdr(ga->token, hdr)
		     : a == -EACCES && rc ? rc
					  : a;
		break;
	}
	pthread_mutex_unlock(&ga->cc.lock);
	return rc;
}

bool gcsauth_refused(struct gcsauth *ga, const char *hdr)
{
	bool worth = false;
	char *cur = NULL;

	pthread_mutex_lock(&ga->cc.lock);
	if (ga->token && make_hdr(ga->token, &cur) == 0) {
		if (strcmp(cur, hdr)) {
			worth = true; /* already replaced */
		} else if (mono_ms() - ga->fetched_ms >= CREDCACHE_RETRY_MS) {
			ga->bad = true;
			worth = true;
		}
	}
	pthread_mutex_unlock(&ga->cc.lock);
	secret_free(&cur);
	return worth;
}

int gcsauth_describe(struct gcsauth *ga, struct buf *out)
{
	char when[40];
	int64_t exp;

	pthread_mutex_lock(&ga->cc.lock);
	exp = ga->exp_ms;
	pthread_mutex_unlock(&ga->cc.lock);
	timefmt_iso_ms(exp, when, sizeof(when));
	return buf_printf(
		out, "credentials = %s (%s)\ncredentials_expire = %s\n",
		ga->use_key ? "keyfile" : "metadata", ga->detail, when);
}
