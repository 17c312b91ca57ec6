/*
 * awscred — where the S3 backend's AWS credentials come from, and keeping
 * temporary ones fresh (README "Object stores", stfs(1) CREDENTIALS).
 *
 * Providers, in the order of the engine's default chain (the AWS SDK's
 * DefaultAWSCredentialsProviderChain):
 *
 *   static     keys given to stfs (access_key/secret_key/session_token from
 *              a config file, the seatunnel.yaml fs.s3a.* keys or the
 *              AWS_* environment variables, or credentials_file)
 *   env        AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
 *   profile    the shared files: AWS_SHARED_CREDENTIALS_FILE
 *              (~/.aws/credentials) then AWS_CONFIG_FILE (~/.aws/config),
 *              section AWS_PROFILE (default "default"); refused when group
 *              or others may read them
 *   container  ECS task role: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (on
 *              169.254.170.2) or AWS_CONTAINER_CREDENTIALS_FULL_URI (https,
 *              or http to a loopback address), Authorization from
 *              AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE)
 *   instance   EC2 instance profile through IMDSv2: PUT /latest/api/token,
 *              then the role's credentials with that token.  The endpoint
 *              is AWS_EC2_METADATA_SERVICE_ENDPOINT (default
 *              http://169.254.169.254); AWS_EC2_METADATA_DISABLED=true
 *              turns it off.  In the default chain it is asked only on an
 *              EC2 host (DMI) or when the endpoint is set.
 *
 * `provider` (conf aws_credentials_provider, imported from the yaml's
 * fs.s3a.aws.credentials.provider) names one provider or a comma-separated
 * list, as stfs names or as the Java classes the engine's docs use; unset,
 * the default chain.  Nothing found by the default chain: requests go
 * unsigned.
 *
 * Temporary credentials are refreshed before they expire (half their life,
 * at most 5 minutes early) by one thread while the others keep signing
 * with the current set; only a set that expired or that the store refused
 * makes readers wait, at most one metadata deadline.  A failed refresh is
 * not tried again for a second.
 *
 * Secrets live in the awscred_set strings only; they are wiped when the
 * last reference goes.  No secret reaches a log line or awscred_describe().
 * Thread-safe after awscred_open().
 */
#ifndef STFS_AWSCRED_H
#define STFS_AWSCRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"
#include "util/buf.h"

/* the settings awscred needs, borrowed for awscred_open() only */
struct awscred_conf {
	const char *provider; /* NULL or "": the default chain */
	/* static keys, or NULL; `static_from` says where they came from */
	const char *access_key, *secret_key, *session_token;
	const char *static_from;
	unsigned timeout_ms; /* deadline of one metadata request */
	unsigned connect_ms;
	const char *ca_file;
	/* base URLs; NULL: the real ones (tests point them at loopback) */
	const char *ecs_base;  /* "http://169.254.170.2" */
	const char *imds_base; /* AWS_EC2_METADATA_SERVICE_ENDPOINT, or
				  "http://169.254.169.254" */
	/* the environment conf captured (AWS_*, HOME), kept for refreshes:
	 * it must outlive the awscred; NULL: none */
	const struct conf_env *env;
};

/* one set of credentials, immutable, shared by reference */
struct awscred_set {
	char *userpwd;	    /* "AK:SK" for CURLOPT_USERPWD (secret) */
	char *token_hdr;    /* "x-amz-security-token: T" (secret), or NULL */
	int64_t expires_ms; /* wall clock, ms since the epoch; 0: never */
	const char *source; /* the provider's stfs name */
	/* private */
	int64_t refresh_ms; /* wall clock: refresh from then on; 0: never */
	int refs;	    /* atomic */
	bool bad;	    /* the store refused it (atomic) */
};

struct awscred;

/* what a provider's answer held */
struct awscred_keys {
	char *ak, *sk, *tok;
	int64_t expires_ms; /* 0: none given */
};

void awscred_keys_wipe(struct awscred_keys *k);

/**
 * Parse an INI credentials or config file for `profile`.  In a config
 * file (`config`) the section is "[profile NAME]" ("[default]" for
 * default).  `profile` NULL: stfs's credentials_file= (README "Object
 * stores"): every section, stfs's key names access_key / secret_key /
 * session_token besides the aws_* ones, the first value of a key wins.
 * 0 with k->ak/k->sk set; -ENOENT (no such profile, or no keys in it);
 * -ENOMEM.  Never logs.
 */
int awscred_parse_ini(const char *text, size_t len, const char *profile,
		      bool config, struct awscred_keys *k);

/**
 * Parse the JSON an ECS endpoint or IMDS returns (AccessKeyId,
 * SecretAccessKey, Token, Expiration; IMDS's Code must be "Success").
 * 0; -EINVAL (not such a document); -ENOMEM.  Never logs secrets.
 */
int awscred_parse_json(const char *text, size_t len, struct awscred_keys *k);

/** An ISO 8601 UTC time ("2026-12-01T10:00:00Z", fractions, +00:00). */
int awscred_parse_time(const char *s, int64_t *ms);

/**
 * Check the settings and fetch the first credentials.  0 and *out; -EINVAL
 * (an unknown provider name, logged); -ENOMEM; -EACCES (a named provider
 * could not give credentials, logged).
 */
int awscred_open(const struct awscred_conf *c, struct awscred **out);
void awscred_close(struct awscred *ac);

/**
 * The current credentials: 0 and *out (a reference: awscred_put() it), or
 * 0 and *out NULL (unsigned requests); -EACCES/-ETIMEDOUT when none can
 * be had now.
 */
int awscred_get(struct awscred *ac, struct awscred_set **out);
void awscred_put(struct awscred_set *s);

/**
 * The store refused `s` as expired or unknown.  Returns whether asking
 * again is worth it (the set came from a provider that can give new
 * ones); the next awscred_get() then fetches fresh credentials.
 */
bool awscred_refused(struct awscred *ac, struct awscred_set *s);

/**
 * Whether an S3 error code means the credentials expired or were rotated
 * away (ExpiredToken, InvalidToken, TokenRefreshRequired, RequestExpired,
 * InvalidAccessKeyId).
 */
bool awscred_code_expired(const char *code);

/**
 * "credentials = PROVIDER\ncredentials_expire = ISO-TIME|never\n" for
 * .stfs/config: names and times only, never a secret.
 */
int awscred_describe(struct awscred *ac, struct buf *out);

#endif
