/*
 * Tests for backends/awscred.c: the parsers (shared credentials and config
 * files, the ECS/IMDS JSON, times), and the providers over a loopback
 * server (tests/fakes/loopsrv) playing the ECS container endpoint and
 * IMDSv2: the authorization token and the IMDSv2 session token are sent,
 * credentials are refreshed before they expire without stalling readers,
 * a refused set is replaced, and the S3 backend sends a request refused
 * with ExpiredToken once more with fresh credentials.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "backends/awscred.h"
#include "backends/backend.h"
#include "fakes/loopsrv.h"
#include "fakes/testutil.h"
#include "util/timefmt.h"

/*
 * The backends read no variable themselves: conf captures the environment
 * (conf_env_capture) and awscred looks values up there.  The tests set
 * variables, then open through this, which captures them first.
 */
static struct conf_env test_env;

static int open_ac(struct awscred_conf *c, struct awscred **out)
{
	assert_int_equal(conf_env_capture(&test_env), 0);
	c->env = &test_env;
	return awscred_open(c, out);
}

/* ---- parsers ---------------------------------------------------------- */

static void test_ini_profiles(void **state)
{
	static const char f[] = "# comment\n"
				"[default]\n"
				"aws_access_key_id = AKDEF\n"
				"aws_secret_access_key=SKDEF \n"
				"\n"
				"[prod]\r\n"
				"; another comment\r\n"
				"aws_access_key_id = AKPROD\r\n"
				"aws_secret_access_key = SK/PROD+x=\r\n"
				"aws_session_token = TOKPROD\r\n"
				"[half]\n"
				"aws_access_key_id = AKHALF\n";
	struct awscred_keys k;

	(void)state;
	assert_int_equal(awscred_parse_ini(f, strlen(f), "default", false, &k),
			 0);
	assert_string_equal(k.ak, "AKDEF");
	assert_string_equal(k.sk, "SKDEF");
	assert_null(k.tok);
	awscred_keys_wipe(&k);
	assert_int_equal(awscred_parse_ini(f, strlen(f), "prod", false, &k), 0);
	assert_string_equal(k.ak, "AKPROD");
	assert_string_equal(k.sk, "SK/PROD+x=");
	assert_string_equal(k.tok, "TOKPROD");
	awscred_keys_wipe(&k);
	assert_null(k.ak);
	assert_int_equal(awscred_parse_ini(f, strlen(f), "half", false, &k),
			 -ENOENT);
	assert_int_equal(awscred_parse_ini(f, strlen(f), "nope", false, &k),
			 -ENOENT);
	assert_int_equal(awscred_parse_ini("", 0, "default", false, &k),
			 -ENOENT);
}

/* profile NULL: stfs's credentials_file= (the s3 backend's one parser) */
static void test_ini_credentials_file(void **state)
{
	static const char f[] = "# keys\n"
				"access_key = FILEAK\n"
				"secret_key=FILESK  \n"
				"[whatever]\n"
				"session_token = FILETOK\r\n"
				"access_key = SECOND\n";
	static const char aws[] = "[default]\n"
				  "aws_access_key_id = AK\n"
				  "aws_secret_access_key = SK\n";
	struct awscred_keys k;

	(void)state;
	assert_int_equal(awscred_parse_ini(f, strlen(f), NULL, false, &k), 0);
	assert_string_equal(k.ak, "FILEAK"); /* the first one wins */
	assert_string_equal(k.sk, "FILESK");
	assert_string_equal(k.tok, "FILETOK");
	awscred_keys_wipe(&k);
	assert_int_equal(awscred_parse_ini(aws, strlen(aws), NULL, false, &k),
			 0);
	assert_string_equal(k.ak, "AK");
	awscred_keys_wipe(&k);
	/* the short names are stfs's: not in an AWS profile */
	assert_int_equal(awscred_parse_ini(f, strlen(f), "whatever", false, &k),
			 -ENOENT);
	assert_int_equal(
		awscred_parse_ini("access_key = A\n", 15, NULL, false, &k),
		-ENOENT);
}

static void test_ini_config_file_sections(void **state)
{
	static const char f[] = "[default]\n"
				"region = eu-west-1\n"
				"aws_access_key_id = AKD\n"
				"aws_secret_access_key = SKD\n"
				"[prod]\n" /* not a profile section in config */
				"aws_access_key_id = WRONG\n"
				"aws_secret_access_key = WRONG\n"
				"[profile  prod ]\n"
				"aws_access_key_id = AKP\n"
				"aws_secret_access_key = SKP\n";
	struct awscred_keys k;

	(void)state;
	assert_int_equal(awscred_parse_ini(f, strlen(f), "prod", true, &k), 0);
	assert_string_equal(k.ak, "AKP");
	awscred_keys_wipe(&k);
	assert_int_equal(awscred_parse_ini(f, strlen(f), "default", true, &k),
			 0);
	assert_string_equal(k.ak, "AKD");
	awscred_keys_wipe(&k);
	/* in a credentials file, "[profile prod]" is not "prod" */
	{
		const char *ps = strstr(f, "[profile");

		assert_int_equal(
			awscred_parse_ini(ps, strlen(ps), "prod", false, &k),
			-ENOENT);
	}
}

static void test_json_documents(void **state)
{
	static const char imds[] =
		"{\"Code\":\"Success\",\"LastUpdated\":\"2026-12-01T10:00:00Z\","
		"\"Type\":\"AWS-HMAC\",\"AccessKeyId\":\"ASIA1\","
		"\"SecretAccessKey\":\"sk1\",\"Token\":\"tok1\","
		"\"Expiration\":\"2026-12-01T16:00:00Z\"}";
	static const char ecs[] =
		"{\"AccessKeyId\":\"ASIA2\",\"SecretAccessKey\":\"sk2\","
		"\"Token\":\"tok2\",\"Expiration\":\"2026-12-01T16:00:00.123Z\","
		"\"RoleArn\":\"arn:aws:iam::1:role/r\"}";
	static const char *const bad[] = {
		"",
		"[]",
		"{\"AccessKeyId\":\"A\"}",
		"{\"AccessKeyId\":1,\"SecretAccessKey\":\"s\"}",
		"{\"Code\":\"Failure\",\"AccessKeyId\":\"A\","
		"\"SecretAccessKey\":\"s\"}",
		"{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"s\","
		"\"Expiration\":\"tomorrow\"}",
		"{\"AccessKeyId\":\"A\",\"AccessKeyId\":\"B\","
		"\"SecretAccessKey\":\"s\"}",
	};
	struct awscred_keys k;
	int64_t t;

	(void)state;
	assert_int_equal(awscred_parse_json(imds, strlen(imds), &k), 0);
	assert_string_equal(k.ak, "ASIA1");
	assert_string_equal(k.sk, "sk1");
	assert_string_equal(k.tok, "tok1");
	assert_int_equal(awscred_parse_time("2026-12-01T16:00:00Z", &t), 0);
	assert_true(k.expires_ms == t);
	awscred_keys_wipe(&k);
	assert_int_equal(awscred_parse_json(ecs, strlen(ecs), &k), 0);
	assert_string_equal(k.ak, "ASIA2");
	assert_true(k.expires_ms == t);
	awscred_keys_wipe(&k);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(awscred_parse_json(bad[i], strlen(bad[i]), &k),
				 -EINVAL);
		assert_null(k.ak);
	}
}

static void test_time_and_codes(void **state)
{
	int64_t t = 0;

	(void)state;
	assert_int_equal(awscred_parse_time("1970-01-01T00:00:01Z", &t), 0);
	assert_true(t == 1000);
	assert_int_equal(awscred_parse_time("2026-12-01T10:00:00+00:00", &t),
			 0);
	assert_int_equal(awscred_parse_time("2026-12-01T10:00:00+02:00", &t),
			 -EINVAL);
	assert_int_equal(awscred_parse_time("2026-13-01T10:00:00Z", &t),
			 -EINVAL);
	assert_int_equal(awscred_parse_time("2026-12-01", &t), -EINVAL);
	assert_true(awscred_code_expired("ExpiredToken"));
	assert_true(awscred_code_expired("InvalidAccessKeyId"));
	assert_false(awscred_code_expired("AccessDenied"));
	assert_false(awscred_code_expired(NULL));
}

/* ---- a loopback ECS endpoint / IMDS / S3 ------------------------------ */

struct md {
	struct loopsrv ls;
	atomic_int gen;	     /* credentials generation served */
	atomic_int life_s;   /* Expiration = now + life_s */
	atomic_int stall_ms; /* sleep before answering credentials */
	atomic_int refuse;   /* answer credentials with 500 */
	atomic_int n_creds;  /* credentials documents served */
	atomic_int n_put, n_put_ttl, n_role_tok, n_auth_ok, n_auth_bad;
	atomic_int n_s3, n_s3_expired;
};

static bool has(const char *req, const char *line)
{
	return strstr(req, line) != NULL;
}

static void serve_creds(struct md *m, int cfd)
{
	char body[512], when[40];
	int g = atomic_load(&m->gen), st = atomic_load(&m->stall_ms);

	if (st > 0)
		usleep((useconds_t)st * 1000);
	if (atomic_load(&m->refuse)) {
		loopsrv_reply(cfd, 500, NULL, "no", 2);
		return;
	}
	timefmt_iso_ms(now_ms() + (int64_t)atomic_load(&m->life_s) * 1000, when,
		       sizeof(when));
	when[19] = 'Z'; /* drop the milliseconds */
	when[20] = '\0';
	snprintf(body, sizeof(body),
		 "{\"Code\":\"Success\",\"AccessKeyId\":\"AK%d\","
		 "\"SecretAccessKey\":\"SK%d\",\"Token\":\"TOK%d\","
		 "\"Expiration\":\"%s\"}",
		 g, g, g, when);
	atomic_fetch_add(&m->n_creds, 1);
	loopsrv_reply(cfd, 200, NULL, body, strlen(body));
}

static void md_serve(struct loopsrv *ls, int cfd, const char *req)
{
	struct md *m = ls->arg;

	if (!strncmp(req, "PUT /latest/api/token ", 22)) {
		atomic_fetch_add(&m->n_put, 1);
		if (has(req, "X-aws-ec2-metadata-token-ttl-seconds: 21600\r\n"))
			atomic_fetch_add(&m->n_put_ttl, 1);
		loopsrv_reply(cfd, 200, NULL, "IMDSTOKEN", 9);
	} else if (!strncmp(req,
			    "GET /latest/meta-data/iam/security-credentials/ ",
			    48)) {
		if (!has(req, "X-aws-ec2-metadata-token: IMDSTOKEN\r\n")) {
			loopsrv_reply(cfd, 401, NULL, "", 0);
			return;
		}
		atomic_fetch_add(&m->n_role_tok, 1);
		loopsrv_reply(cfd, 200, NULL, "stfs-role\n", 10);
	} else if (!strncmp(req,
			    "GET /latest/meta-data/iam/security-credentials/"
			    "stfs-role ",
			    57)) {
		if (!has(req, "X-aws-ec2-metadata-token: IMDSTOKEN\r\n")) {
			loopsrv_reply(cfd, 401, NULL, "", 0);
			return;
		}
		serve_creds(m, cfd);
	} else if (!strncmp(req, "GET /v2/credentials/abc ", 24) ||
		   !strncmp(req, "GET /full ", 10)) {
		if (!has(req, "Authorization: Bearer s3cr3t\r\n")) {
			atomic_fetch_add(&m->n_auth_bad, 1);
			loopsrv_reply(cfd, 403, NULL, "", 0);
			return;
		}
		atomic_fetch_add(&m->n_auth_ok, 1);
		serve_creds(m, cfd);
	} else if (!strncmp(req, "GET /ckpt", 9)) {
		/* S3: the current generation's token is accepted */
		char want[64];
		static const char exp[] =
			"<?xml version=\"1.0\"?><Error><Code>ExpiredToken</Code>"
			"<Message>The provided token has expired.</Message>"
			"</Error>";
		static const char ok[] =
			"<?xml version=\"1.0\"?><ListBucketResult><Name>ckpt"
			"</Name><KeyCount>0</KeyCount><IsTruncated>false"
			"</IsTruncated></ListBucketResult>";

		atomic_fetch_add(&m->n_s3, 1);
		snprintf(want, sizeof(want), "x-amz-security-token: TOK%d\r\n",
			 atomic_load(&m->gen));
		if (!has(req, want)) {
			atomic_fetch_add(&m->n_s3_expired, 1);
			loopsrv_reply(cfd, 400, NULL, exp, strlen(exp));
		} else {
			loopsrv_reply(cfd, 200, NULL, ok, strlen(ok));
		}
	} else {
		loopsrv_reply(cfd, 404, NULL, "", 0);
	}
}

static struct md *md_start(void)
{
	struct md *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	atomic_store(&m->gen, 1);
	atomic_store(&m->life_s, 3600);
	assert_int_equal(loopsrv_start(&m->ls, md_serve, m), 0);
	return m;
}

static void md_stop(struct md *m)
{
	loopsrv_stop(&m->ls);
	free(m);
}

/* no variable of the real environment leaks into a test */
static void clean_env(void)
{
	static const char *const vars[] = {
		"AWS_ACCESS_KEY_ID",
		"AWS_SECRET_ACCESS_KEY",
		"AWS_SESSION_TOKEN",
		"AWS_PROFILE",
		"AWS_DEFAULT_PROFILE",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_CONTAINER_AUTHORIZATION_TOKEN",
		"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
		"AWS_EC2_METADATA_SERVICE_ENDPOINT",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
	setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
}

static struct awscred_conf md_conf(struct md *m, const char *provider,
				   char *base, size_t basesz)
{
	loopsrv_url(&m->ls, "", base, basesz);
	return (struct awscred_conf){
		.provider = provider,
		.timeout_ms = 3000,
		.ecs_base = base,
		.imds_base = base,
	};
}

static void test_container_relative_uri_with_token(void **state)
{
	struct md *m = md_start();
	char base[64];
	struct awscred_conf c = md_conf(m, NULL, base, sizeof(base));
	struct awscred *ac = NULL;
	struct awscred_set *s = NULL;
	struct buf d;

	(void)state;
	clean_env();
	setenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/abc",
	       1);
	/* a wrong token is refused by the endpoint: no credentials */
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer wrong", 1);
	assert_int_equal(open_ac(&c, &ac), -EACCES);
	assert_int_equal(atomic_load(&m->n_auth_bad), 1);
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer s3cr3t", 1);
	assert_int_equal(open_ac(&c, &ac), 0);
	assert_int_equal(awscred_get(ac, &s), 0);
	assert_non_null(s);
	assert_string_equal(s->userpwd, "AK1:SK1");
	assert_string_equal(s->token_hdr, "x-amz-security-token: TOK1");
	assert_string_equal(s->source, "container");
	assert_true(s->expires_ms > now_ms());
	awscred_put(s);
	buf_init(&d, 4096);
	assert_int_equal(awscred_describe(ac, &d), 0);
	assert_non_null(strstr(d.data, "credentials = container"));
	assert_non_null(strstr(d.data, "credentials_expire = 20"));
	assert_null(strstr(d.data, "SK1"));
	assert_null(strstr(d.data, "TOK1"));
	assert_null(strstr(d.data, "s3cr3t"));
	buf_release(&d);
	awscred_close(ac);
	md_stop(m);
	clean_env();
}

static void test_container_full_uri_rules(void **state)
{
	struct md *m = md_start();
	char base[64], full[96], tokf[] = "/tmp/stfs-awscred-tok-XXXXXX";
	struct awscred_conf c = md_conf(m, "container", base, sizeof(base));
	struct awscred *ac = NULL;
	int fd;

	(void)state;
	clean_env();
	/* plain http to a non-loopback host: refused without a request */
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://10.1.2.3/creds",
	       1);
	assert_int_equal(open_ac(&c, &ac), -EINVAL);
	assert_int_equal(atomic_load(&m->ls.nreq), 0);
	/* loopback, with the token from a file */
	fd = mkstemp(tokf);
	assert_true(fd >= 0);
	assert_true(write(fd, "Bearer s3cr3t\n", 14) == 14);
	close(fd);
	loopsrv_url(&m->ls, "/full", full, sizeof(full));
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", full, 1);
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", tokf, 1);
	assert_int_equal(open_ac(&c, &ac), 0);
	assert_int_equal(atomic_load(&m->n_auth_ok), 1);
	awscred_close(ac);
	unlink(tokf);
	md_stop(m);
	clean_env();
}

static void test_instance_imdsv2(void **state)
{
	struct md *m = md_start();
	char base[64];
	struct awscred_conf c = md_conf(m,
					"com.amazonaws.auth."
					"InstanceProfileCredentialsProvider",
					base, sizeof(base));
	struct awscred *ac = NULL;
	struct awscred_set *s = NULL;
	struct buf d;

	(void)state;
	clean_env();
	unsetenv("AWS_EC2_METADATA_DISABLED");
	assert_int_equal(open_ac(&c, &ac), 0);
	assert_int_equal(atomic_load(&m->n_put), 1);
	assert_int_equal(atomic_load(&m->n_put_ttl), 1);
	assert_int_equal(atomic_load(&m->n_role_tok), 1);
	assert_int_equal(atomic_load(&m->n_creds), 1);
	assert_int_equal(awscred_get(ac, &s), 0);
	assert_string_equal(s->userpwd, "AK1:SK1");
	assert_string_equal(s->source, "instance");
	awscred_put(s);
	buf_init(&d, 4096);
	assert_int_equal(awscred_describe(ac, &d), 0);
	assert_non_null(strstr(d.data, "instance (role stfs-role)"));
	assert_null(strstr(d.data, "IMDSTOKEN"));
	buf_release(&d);
	awscred_close(ac);
	/* AWS_EC2_METADATA_DISABLED=true: not asked */
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	assert_int_equal(open_ac(&c, &ac), -EACCES);
	assert_int_equal(atomic_load(&m->n_put), 1);
	md_stop(m);
	clean_env();
}

static void test_profile_file_and_mode(void **state)
{
	char dir[] = "/tmp/stfs-awscred-XXXXXX", path[128];
	struct awscred_conf c = {.provider = "profile", .timeout_ms = 1000};
	struct awscred *ac = NULL;
	struct awscred_set *s = NULL;
	FILE *f;

	(void)state;
	clean_env();
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/credentials", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[default]\naws_access_key_id=AKD\naws_secret_access_key=SKD\n"
	      "[ops]\naws_access_key_id=AKO\naws_secret_access_key=SKO\n"
	      "aws_session_token=TOKO\n",
	      f);
	fclose(f);
	chmod(path, 0644);
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	setenv("AWS_PROFILE", "ops", 1);
	assert_int_equal(open_ac(&c, &ac), -EACCES); /* mode */
	chmod(path, 0600);
	assert_int_equal(open_ac(&c, &ac), 0);
	assert_int_equal(awscred_get(ac, &s), 0);
	assert_string_equal(s->userpwd, "AKO:SKO");
	assert_string_equal(s->token_hdr, "x-amz-security-token: TOKO");
	assert_true(s->expires_ms == 0);
	awscred_put(s);
	awscred_close(ac);
	unlink(path);
	rmdir(dir);
	clean_env();
}

static void test_provider_names(void **state)
{
	struct awscred_conf c = {.timeout_ms = 1000};
	struct awscred *ac = NULL;
	struct awscred_set *s = NULL;

	(void)state;
	clean_env();
	c.provider = "com.example.NoSuchProvider";
	assert_int_equal(open_ac(&c, &ac), -EINVAL);
	c.provider = " , ";
	assert_int_equal(open_ac(&c, &ac), -EINVAL);
	/* the default chain finding nothing: unsigned */
	c.provider = NULL;
	assert_int_equal(open_ac(&c, &ac), 0);
	assert_int_equal(awscred_get(ac, &s), 0);
	assert_null(s);
	awscred_close(ac);
	/* env named: the variables, not the static keys */
	c.provider =
		"com.amazonaws.auth.EnvironmentVariableCredentialsProvider";
	c.access_key = "STATICAK";
	c.secret_key = "STATICSK";
	assert_int_equal(open_ac(&c, &ac), -EACCES);
	setenv("AWS_ACCESS_KEY_ID", "ENVAK", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "ENVSK", 1);
	setenv("AWS_SESSION_TOKEN", "ENVTOK", 1);
	assert_int_equal(open_ac(&c, &ac), 0);
	assert_int_equal(awscred_get(ac, &s), 0);
	assert_string_equal(s->userpwd, "ENVAK:ENVSK");
	assert_string_equal(s->token_hdr, "x-amz-security-token: ENVTOK");
	awscred_put(s);
	awscred_close(ac);
	/* static first in the default chain; a token with CR/LF refused */
	c.provider = NULL;
	c.session_token = "bad\r\nX-Injected: 1";
	assert_int_equal(open_ac(&c, &ac), -EACCES);
	clean_env();
}

struct getter {
	struct awscred *ac;
	int64_t took_ms;
	char userpwd[64];
	int rc;
};

static void *getter_main(void *arg)
{
	struct getter *g = arg;
	struct awscred_set *s = NULL;
	int64_t t0 = mono_ms();

	g->rc = awscred_get(g->ac, &s);
	g->took_ms = mono_ms() - t0;
	if (s)
		snprintf(g->userpwd, sizeof(g->userpwd), "%s", s->userpwd);
	awscred_put(s);
	return NULL;
}

static void test_refresh_before_expiry_without_stall(void **state)
{
	struct md *m = md_start();
	char base[64];
	struct awscred_conf c = md_conf(m, "container", base, sizeof(base));
	struct awscred *ac = NULL;
	struct getter g1 = {0}, g2 = {0};
	pthread_t t1;

	(void)state;
	clean_env();
	setenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/abc",
	       1);
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer s3cr3t", 1);
	/* Expiration has whole seconds: 5-6 s, refreshed after 2.5-3 s */
	atomic_store(&m->life_s, 6);
	assert_int_equal(open_ac(&c, &ac), 0);
	g1.ac = g2.ac = ac;
	getter_main(&g1);
	assert_string_equal(g1.userpwd, "AK1:SK1");
	assert_int_equal(atomic_load(&m->n_creds), 1);
	usleep(3100 * 1000);
	/* due: one thread refreshes (the endpoint takes 1.5 s) ... */
	atomic_store(&m->gen, 2);
	atomic_store(&m->stall_ms, 1500);
	assert_int_equal(pthread_create(&t1, NULL, getter_main, &g1), 0);
	usleep(200 * 1000);
	/* ... while another signs at once with the current set */
	getter_main(&g2);
	assert_int_equal(g2.rc, 0);
	assert_true(g2.took_ms < 300);
	assert_string_equal(g2.userpwd, "AK1:SK1");
	pthread_join(t1, NULL);
	assert_int_equal(g1.rc, 0);
	assert_string_equal(g1.userpwd, "AK2:SK2");
	assert_int_equal(atomic_load(&m->n_creds), 2);
	/* a failing endpoint: the current set goes on being used */
	atomic_store(&m->stall_ms, 0);
	atomic_store(&m->refuse, 1);
	usleep(3200 * 1000);
	getter_main(&g2);
	assert_int_equal(g2.rc, 0);
	assert_string_equal(g2.userpwd, "AK2:SK2");
	/* the endpoint answers again: the due refresh happens */
	atomic_store(&m->refuse, 0);
	atomic_store(&m->gen, 3);
	atomic_store(&m->life_s, 3600);
	usleep(1100 * 1000); /* past the retry pause */
	getter_main(&g2);
	assert_string_equal(g2.userpwd, "AK3:SK3");
	/* refused by the store: the next get fetches a new set */
	atomic_store(&m->gen, 4);
	getter_main(&g2);
	assert_string_equal(g2.userpwd, "AK3:SK3"); /* not due */
	usleep(1100 * 1000);
	{
		struct awscred_set *s = NULL;

		assert_int_equal(awscred_get(ac, &s), 0);
		assert_true(awscred_refused(ac, s));
		awscred_put(s);
	}
	getter_main(&g2);
	assert_string_equal(g2.userpwd, "AK4:SK4");
	awscred_close(ac);
	md_stop(m);
	clean_env();
}

static int count_fill(void *cookie, const char *name,
		      const struct be_attr *attr)
{
	(void)name;
	(void)attr;
	(*(int *)cookie)++;
	return 0;
}

static void test_s3_retries_expired_token_once(void **state)
{
	struct md *m = md_start();
	struct stfs_conf c = {0};
	char ep[64], full[96];
	struct backend *be = NULL;
	int n = 0;

	(void)state;
	clean_env();
	loopsrv_url(&m->ls, "", ep, sizeof(ep));
	loopsrv_url(&m->ls, "/full", full, sizeof(full));
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", full, 1);
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer s3cr3t", 1);
	c.endpoint = ep;
	c.path_style = true;
	c.timeout_ms = 3000;
	c.aws_credentials_provider = (char *)(uintptr_t) "container";
	assert_int_equal(conf_env_capture(&c.env), 0);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	usleep(1100 * 1000);
	/* the store revokes TOK1; the endpoint now hands out TOK2 */
	atomic_store(&m->gen, 2);
	assert_int_equal(be_list(be, "", 0, count_fill, &n), 0);
	assert_int_equal(atomic_load(&m->n_s3_expired), 1);
	assert_int_equal(atomic_load(&m->n_s3), 2);
	assert_int_equal(atomic_load(&m->n_creds), 2);
	/* a second expiry at once: no endless loop, one retry at most */
	atomic_store(&m->gen, 3);
	atomic_store(&m->refuse, 1);
	assert_true(be_list(be, "", 0, count_fill, &n) < 0);
	assert_true(atomic_load(&m->n_s3) <= 4);
	be_close(be);
	conf_env_release(&c.env);
	md_stop(m);
	clean_env();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ini_profiles),
		cmocka_unit_test(test_ini_config_file_sections),
		cmocka_unit_test(test_ini_credentials_file),
		cmocka_unit_test(test_json_documents),
		cmocka_unit_test(test_time_and_codes),
		cmocka_unit_test(test_container_relative_uri_with_token),
		cmocka_unit_test(test_container_full_uri_rules),
		cmocka_unit_test(test_instance_imdsv2),
		cmocka_unit_test(test_profile_file_and_mode),
		cmocka_unit_test(test_provider_names),
		cmocka_unit_test(test_refresh_before_expiry_without_stall),
		cmocka_unit_test(test_s3_retries_expired_token_once),
	};

	int rc = cmocka_run_group_tests(tests, loopsrv_group_setup,
					loopsrv_group_teardown);

	conf_env_release(&test_env);
	return rc;
}
