/*
 * Tests for backends/gcsauth.c and backends/gcs.c: the key and token
 * parsers, the RS256 JWT (verified here against the key pair the test
 * made), and the JSON API backend over a loopback server (tests/fakes/
 * loopsrv) that plays the token endpoint and storage: the bearer token is
 * sent, listings follow nextPageToken, reads are alt=media with Range,
 * deletes are DELETE, a 401 is answered once more with a fresh token.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "backends/backend.h"
#include "fakes/loopsrv.h"
#include "fakes/testutil.h"
#include "backends/gcsauth.h"

static char *pem_priv, *pem_pub;

static void make_keys(void)
{
	EVP_PKEY *pk;
	BIO *b;
	char *p;
	long n;

	if (pem_priv)
		return;
	pk = EVP_RSA_gen(2048);
	assert_non_null(pk);
	b = BIO_new(BIO_s_mem());
	assert_int_equal(
		PEM_write_bio_PrivateKey(b, pk, NULL, NULL, 0, NULL, NULL), 1);
	n = BIO_get_mem_data(b, &p);
	pem_priv = strndup(p, (size_t)n);
	BIO_free(b);
	b = BIO_new(BIO_s_mem());
	assert_int_equal(PEM_write_bio_PUBKEY(b, pk), 1);
	n = BIO_get_mem_data(b, &p);
	pem_pub = strndup(p, (size_t)n);
	BIO_free(b);
	EVP_PKEY_free(pk);
}

static char *key_json(const char *token_uri)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "type", "service_account",
			      "client_email", "sa@p.iam.gserviceaccount.com",
			      "private_key", pem_priv, "token_uri", token_uri);
	char *s = json_dumps(o, 0);

	json_decref(o);
	return s;
}

static void test_parse_key_and_token(void **state)
{
	struct gcs_sa sa;
	char *k, *tok = NULL;
	int64_t ei = 0;
	static const char *const bad_keys[] = {
		"",
		"[]",
		"{\"type\":\"authorized_user\",\"client_email\":\"a\","
		"\"private_key\":\"-----BEGIN x\"}",
		"{\"type\":\"service_account\",\"private_key\":\"-----BEGIN\"}",
		"{\"type\":\"service_account\",\"client_email\":\"a\","
		"\"private_key\":\"nope\"}",
	};
	static const char *const bad_toks[] = {
		"{}",
		"{\"access_token\":\"t\"}",
		"{\"access_token\":\"t\",\"expires_in\":0}",
		"{\"access_token\":\"t\",\"expires_in\":60,\"token_type\":\"MAC\"}",
		"{\"access_token\":\"a b\",\"expires_in\":60}",
	};

	(void)state;
	make_keys();
	k = key_json("http://127.0.0.1:1/token");
	assert_int_equal(gcsauth_parse_key(k, strlen(k), &sa), 0);
	assert_string_equal(sa.email, "sa@p.iam.gserviceaccount.com");
	assert_string_equal(sa.token_uri, "http://127.0.0.1:1/token");
	gcs_sa_wipe(&sa);
	free(k);
	for (size_t i = 0; i < sizeof(bad_keys) / sizeof(bad_keys[0]); i++)
		assert_int_equal(gcsauth_parse_key(bad_keys[i],
						   strlen(bad_keys[i]), &sa),
				 -EINVAL);
	{
		static const char t[] = "{\"access_token\":\"ya29.x\","
					"\"expires_in\":3599,"
					"\"token_type\":\"Bearer\"}";

		assert_int_equal(gcsauth_parse_token(t, strlen(t), &tok, &ei),
				 0);
	}
	assert_string_equal(tok, "ya29.x");
	assert_true(ei == 3599);
	free(tok);
	for (size_t i = 0; i < sizeof(bad_toks) / sizeof(bad_toks[0]); i++)
		assert_int_equal(gcsauth_parse_token(bad_toks[i],
						     strlen(bad_toks[i]), &tok,
						     &ei),
				 -EINVAL);
}

static unsigned char *b64d(const char *s, size_t n, size_t *out)
{
	char *t = calloc(1, n + 4);
	unsigned char *r = calloc(1, n + 4);
	size_t m = n;
	int len;

	memcpy(t, s, n);
	for (size_t i = 0; i < n; i++)
		t[i] = t[i] == '-' ? '+' : t[i] == '_' ? '/' : t[i];
	while (m % 4)
		t[m++] = '=';
	len = EVP_DecodeBlock(r, (unsigned char *)t, (int)m);
	free(t);
	assert_true(len >= 0);
	*out = (size_t)len - (n % 4 == 2 ? 2 : n % 4 == 3 ? 1 : 0);
	return r;
}

static void test_jwt_rs256_verifies(void **state)
{
	struct gcs_sa sa = {
		.email = (char *)(uintptr_t) "sa@p.iam.gserviceaccount.com",
		.token_uri = (char *)(uintptr_t) "https://oauth2.example/token",
	};
	char *jwt = NULL, *d1, *d2;
	unsigned char *claims, *sig;
	size_t cl, sl;
	EVP_PKEY *pub;
	EVP_MD_CTX *md;
	BIO *b;
	json_t *c;

	(void)state;
	make_keys();
	sa.private_key = pem_priv;
	assert_int_equal(gcsauth_jwt(&sa, "scope-x", 1764583200, &jwt), 0);
	d1 = strchr(jwt, '.');
	assert_non_null(d1);
	d2 = strchr(d1 + 1, '.');
	assert_non_null(d2);
	claims = b64d(d1 + 1, (size_t)(d2 - d1 - 1), &cl);
	c = json_loadb((char *)claims, cl, 0, NULL);
	assert_non_null(c);
	assert_string_equal(json_string_value(json_object_get(c, "iss")),
			    sa.email);
	assert_string_equal(json_string_value(json_object_get(c, "aud")),
			    sa.token_uri);
	assert_true(json_integer_value(json_object_get(c, "exp")) ==
		    1764583200 + 3600);
	json_decref(c);
	free(claims);
	sig = b64d(d2 + 1, strlen(d2 + 1), &sl);
	b = BIO_new_mem_buf(pem_pub, -1);
	pub = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
	BIO_free(b);
	md = EVP_MD_CTX_new();
	assert_int_equal(
		EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pub), 1);
	assert_int_equal(EVP_DigestVerify(md, sig, sl, (unsigned char *)jwt,
					  (size_t)(d2 - jwt)),
			 1);
	/* a changed claim no longer verifies */
	jwt[5] ^= 1;
	assert_int_not_equal(EVP_DigestVerify(md, sig, sl, (unsigned char *)jwt,
					      (size_t)(d2 - jwt)),
			     1);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pub);
	free(sig);
	free(jwt);
	/* a key that is no RSA PEM */
	sa.private_key = (char *)(uintptr_t) "-----BEGIN PRIVATE KEY-----\nx\n";
	assert_int_equal(gcsauth_jwt(&sa, "s", 1, &jwt), -EINVAL);
}

/* ---- a loopback token endpoint + JSON API ----------------------------- */

struct srv {
	struct loopsrv ls;
	atomic_int gen; /* token generation handed out / accepted */
	atomic_int n_token, n_list, n_read, n_delete, n_401;
	atomic_int hang; /* storage requests are never answered */
	char last_range[64];
};

static void serve(struct loopsrv *ls, int cfd, const char *req)
{
	struct srv *s = ls->arg;
	char want[64], body[1024];
	const char *r;

	if (!strncmp(req, "POST /token ", 12)) {
		atomic_fetch_add(&s->n_token, 1);
		snprintf(body, sizeof(body),
			 "{\"access_token\":\"tok%d\",\"expires_in\":3600,"
			 "\"token_type\":\"Bearer\"}",
			 atomic_load(&s->gen));
		loopsrv_reply(cfd, 200, NULL, body, strlen(body));
		return;
	}
	if (atomic_load(&s->hang)) {
		loopsrv_hang(ls, cfd);
		return;
	}
	snprintf(want, sizeof(want), "Authorization: Bearer tok%d\r\n",
		 atomic_load(&s->gen));
	if (!strstr(req, want)) {
		atomic_fetch_add(&s->n_401, 1);
		loopsrv_reply(cfd, 401, NULL, "{}", 2);
		return;
	}
	if (!strncmp(req, "GET /storage/v1/b/bk/o?", 23)) {
		atomic_fetch_add(&s->n_list, 1);
		if (strstr(req, "pageToken=p%2B2"))
			snprintf(body, sizeof(body),
				 "{\"items\":[{\"name\":\"ns/b.ser\","
				 "\"size\":\"7\",\"updated\":"
				 "\"2026-12-01T10:00:00.250Z\"}]}");
		else
			snprintf(body, sizeof(body),
				 "{\"items\":[{\"name\":\"ns/a b.ser\","
				 "\"size\":\"5\"},{\"name\":\"ns/\"},"
				 "{\"name\":\"ns/../x\"}],\"prefixes\":"
				 "[\"ns/7/\"],\"nextPageToken\":\"p+2\"}");
		loopsrv_reply(cfd, 200, NULL, body, strlen(body));
	} else if (!strncmp(req,
			    "GET /storage/v1/b/bk/o/ns%2Fa%20b.ser?alt=media ",
			    48)) {
		atomic_fetch_add(&s->n_read, 1);
		r = strstr(req, "Range: ");
		if (r)
			snprintf(s->last_range, sizeof(s->last_range), "%.*s",
				 (int)strcspn(r, "\r"), r);
		loopsrv_reply(cfd, 206, NULL, "ell", 3);
	} else if (!strncmp(req, "DELETE /storage/v1/b/bk/o/ns%2Fa%20b.ser ",
			    41)) {
		atomic_fetch_add(&s->n_delete, 1);
		loopsrv_reply(cfd, 204, NULL, "", 0);
	} else {
		loopsrv_reply(cfd, 404, NULL, "{}", 2);
	}
}

struct names {
	char buf[512];
};

static int collect(void *cookie, const char *name, const struct be_attr *a)
{
	struct names *n = cookie;
	size_t l = strlen(n->buf);

	snprintf(n->buf + l, sizeof(n->buf) - l, "%s%s:%llu:%lld;",
		 a->type == BE_DIR ? "d " : "", name,
		 (unsigned long long)a->size,
		 (long long)(a->mtime_ns / 1000000));
	return 0;
}

/* a service-account key file naming the server's token endpoint; path is
 * a mkstemp template, filled */
static void write_key(struct srv *s, char *path)
{
	char tu[96], *k;
	int fd;

	make_keys();
	loopsrv_url(&s->ls, "/token", tu, sizeof(tu));
	k = key_json(tu);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_true(write(fd, k, strlen(k)) == (ssize_t)strlen(k));
	assert_int_equal(fchmod(fd, 0600), 0);
	close(fd);
	free(k);
}

/* start the server, write its key file (path: a mkstemp template) and
 * point `c` at both, with no credentials from the environment */
static void json_api_setup(struct srv *s, char *path, char *ep, size_t epsz,
			   struct stfs_conf *c)
{
	atomic_store(&s->gen, 1);
	assert_int_equal(loopsrv_start(&s->ls, serve, s), 0);
	loopsrv_url(&s->ls, "", ep, epsz);
	write_key(s, path);
	unsetenv("GOOGLE_ACCESS_KEY_ID");
	unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
	unsetenv("STFS_S3_MAX_KEYS");
	c->credentials_file = path;
	c->endpoint = ep;
}

static void test_json_api_backend(void **state)
{
	struct srv *s = calloc(1, sizeof(*s));
	char ep[64], path[] = "/tmp/stfs-gcs-key-XXXXXX";
	struct stfs_conf c = {0};
	struct backend *be = NULL;
	struct names n = {{0}};
	char rbuf[8];
	const char *one[1] = {"a b.ser"};

	(void)state;
	json_api_setup(s, path, ep, sizeof(ep), &c);
	c.timeout_ms = 3000;
	/* a key others may read is refused */
	chmod(path, 0644);
	assert_int_equal(be_open(("gs://bk/ns/"), &c, &be), -EACCES);
	chmod(path, 0600);
	assert_int_equal(be_open("gs://bk/ns/", &c, &be), 0);
	assert_string_equal(be->ops->name, "gcs");
	assert_int_equal(atomic_load(&s->n_token), 1);
	/* two pages; markers and hostile names skipped */
	assert_int_equal(be_list(be, "", 0, collect, &n), 0);
	assert_string_equal(n.buf,
			    "a b.ser:5:0;d 7:0:0;b.ser:7:1796119200250;");
	assert_int_equal(atomic_load(&s->n_list), 2);
	assert_int_equal(be_read(be, "a b.ser", rbuf, 3, 1), 3);
	assert_memory_equal(rbuf, "ell", 3);
	assert_string_equal(s->last_range, "Range: bytes=1-3");
	/* the token is revoked: one 401, a fresh token, the same request */
	usleep(1100 * 1000);
	atomic_store(&s->gen, 2);
	assert_int_equal(be_remove(be, one[0]), 0);
	assert_int_equal(atomic_load(&s->n_401), 1);
	assert_int_equal(atomic_load(&s->n_token), 2);
	assert_int_equal(atomic_load(&s->n_delete), 1);
	{
		struct buf d;

		buf_init(&d, 4096);
		assert_int_equal(be_describe(be, &d), 0);
		assert_non_null(strstr(d.data, "credentials = keyfile (service "
					       "account sa@p.iam"));
		assert_null(strstr(d.data, "tok2"));
		buf_release(&d);
	}
	be_close(be);
	unlink(path);
	loopsrv_stop(&s->ls);
	free(s);
}

/*
 * A JSON API store that does not answer is met once per deadline: the
 * request that hit the deadline spares the next calls of every kind for
 * one timeout, unsent (README "Failure modes"), and once that has passed
 * the store is asked again.
 */
static void test_json_api_unreachable_spares_next_calls(void **state)
{
	struct srv *s = calloc(1, sizeof(*s));
	char ep[64], path[] = "/tmp/stfs-gcs-key-XXXXXX", rbuf[8];
	struct stfs_conf c = {0};
	struct backend *be = NULL;
	struct names n = {{0}};
	struct be_attr a;
	int64_t t0;
	int nreq;

	(void)state;
	json_api_setup(s, path, ep, sizeof(ep), &c);
	c.timeout_ms = 400;
	assert_int_equal(be_open("gs://bk/ns/", &c, &be), 0);
	atomic_store(&s->hang, 1);
	t0 = tu_mono_ms();
	assert_int_equal(be_list(be, "", 0, collect, &n), -ETIMEDOUT);
	assert_true(tu_mono_ms() - t0 < 400 + 900);
	nreq = atomic_load(&s->ls.nreq);
	/* a read and a stat right after: no second deadline, nothing sent */
	t0 = tu_mono_ms();
	assert_int_equal(be_read(be, "a b.ser", rbuf, 3, 1), -ETIMEDOUT);
	assert_int_equal(be_stat(be, "a b.ser", &a), -ETIMEDOUT);
	assert_true(tu_mono_ms() - t0 < 100);
	assert_int_equal(atomic_load(&s->ls.nreq), nreq);
	/* the store answers again: asked again once the deadline passed */
	atomic_store(&s->hang, 0);
	tu_sleep_ms(450);
	assert_int_equal(be_read(be, "a b.ser", rbuf, 3, 1), 3);
	assert_int_equal(atomic_load(&s->n_read), 1);
	be_close(be);
	unlink(path);
	loopsrv_stop(&s->ls);
	free(s);
}

/* HMAC keys: the XML API of the s3 backend, its health seen on the gcs one */
static void test_hmac_keeps_xml_api_and_health(void **state)
{
	struct srv *s = calloc(1, sizeof(*s));
	struct stfs_conf c = {0};
	struct backend *be = NULL;
	struct names n = {{0}};
	char ep[64], msg[160];
	int err = 0;
	int64_t e_ms, ok_ms;

	(void)state;
	assert_int_equal(loopsrv_start(&s->ls, serve, s), 0);
	loopsrv_url(&s->ls, "", ep, sizeof(ep));
	c.endpoint = ep;
	c.path_style = true;
	c.timeout_ms = 2000;
	c.access_key = (char *)(uintptr_t) "GOOGHMAC";
	c.secret_key = (char *)(uintptr_t) "hmacsecret";
	assert_int_equal(be_open("gs://bk/ns/", &c, &be), 0);
	/* the store refuses (no bearer token, no SigV4 accepted): EACCES */
	assert_int_equal(be_list(be, "", 0, collect, &n), -EACCES);
	assert_int_equal(atomic_load(&s->n_token), 0);
	assert_non_null(strstr(s->ls.last_req, "AWS4-HMAC-SHA256"));
	be_health(be, &err, &e_ms, &ok_ms, msg, sizeof(msg));
	assert_int_equal(err, -EACCES);
	be_close(be);
	loopsrv_stop(&s->ls);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_key_and_token),
		cmocka_unit_test(test_jwt_rs256_verifies),
		cmocka_unit_test(test_json_api_backend),
		cmocka_unit_test(test_json_api_unreachable_spares_next_calls),
		cmocka_unit_test(test_hmac_keeps_xml_api_and_health),
	};
	int rc = cmocka_run_group_tests(tests, loopsrv_group_setup,
					loopsrv_group_teardown);

	free(pem_priv);
	free(pem_pub);
	return rc;
}
