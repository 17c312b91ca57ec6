/*
 * gcsauth — OAuth2 access tokens for the GCS JSON API (README "GCS with
 * service accounts"), as Application Default Credentials find them:
 *
 *   keyfile    a service-account JSON key (the yaml's
 *              fs.gs.auth.service.account.json.keyfile, or
 *              GOOGLE_APPLICATION_CREDENTIALS); refused when group or
 *              others may read it.  A JWT (RS256, signed with libcrypto)
 *              is exchanged at the key's token_uri for a token (the JWT
 *              bearer grant, RFC 7523).
 *   metadata   the GCE/GKE metadata server's token for the instance's
 *              service account (GCE_METADATA_HOST, default
 *              metadata.google.internal; asked only on a GCE host or when
 *              GCE_METADATA_HOST is set).
 *
 * Tokens are refreshed at half their life (at most 5 minutes early) by one
 * thread while the others keep the current one; a token the store refused
 * (401) is replaced before the next request.  Keys, JWTs and tokens never
 * reach a log line or gcsauth_describe().  Thread-safe after open.
 */
#ifndef STFS_GCSAUTH_H
#define STFS_GCSAUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"
#include "util/buf.h"

struct gcsauth_conf {
	const char *keyfile; /* NULL: GOOGLE_APPLICATION_CREDENTIALS, or the
				metadata server */
	unsigned timeout_ms, connect_ms;
	const char *ca_file;
	const char *metadata_base; /* NULL: http://$GCE_METADATA_HOST or
				      http://metadata.google.internal */
	/* the environment conf captured (GOOGLE_APPLICATION_CREDENTIALS,
	 * GCE_METADATA_HOST), read at open only; NULL: none */
	const struct conf_env *env;
};

/* a service-account key (secret: private_key) */
struct gcs_sa {
	char *email, *private_key, *token_uri;
};

void gcs_sa_wipe(struct gcs_sa *sa);

/**
 * Parse a service-account JSON key: type "service_account", client_email,
 * private_key (PEM), token_uri (default https://oauth2.googleapis.com/
 * token).  0; -EINVAL; -ENOMEM.  Never logs.
 */
int gcsauth_parse_key(const char *text, size_t len, struct gcs_sa *sa);

/**
 * Parse a token response: access_token, expires_in (seconds), token_type
 * Bearer if present.  0 with *token (malloc'd, wipe it) and *expires_in_s;
 * -EINVAL; -ENOMEM.
 */
int gcsauth_parse_token(const char *text, size_t len, char **token,
			int64_t *expires_in_s);

/**
 * The signed JWT assertion for `sa` (RS256): iss = client_email, scope,
 * aud = token_uri, iat = now_s, exp = now_s + 3600.  0 with *jwt
 * (malloc'd, secret); -EINVAL (the key does not load); -ENOMEM.
 */
int gcsauth_jwt(const struct gcs_sa *sa, const char *scope, int64_t now_s,
		char **jwt);

struct gcsauth;

/**
 * Find the credentials and fetch the first token.  0 and *out; -ENOENT
 * (no key file and no metadata server: the caller goes elsewhere);
 * -EACCES (a key or server that gave no token, logged); -EINVAL; -ENOMEM.
 */
int gcsauth_open(const struct gcsauth_conf *c, struct gcsauth **out);
void gcsauth_close(struct gcsauth *ga);

/**
 * "Authorization: Bearer TOKEN" for one request (malloc'd; wipe and free
 * it), refreshing first when due.  0; -EACCES/-ETIMEDOUT.
 */
int gcsauth_header(struct gcsauth *ga, char **hdr);

/**
 * The store answered 401 to `hdr`: whether asking again is worth it (the
 * token is then fetched anew by the next gcsauth_header()).
 */
bool gcsauth_refused(struct gcsauth *ga, const char *hdr);

/** "credentials = ...\ncredentials_expire = ...\n" (no secret). */
int gcsauth_describe(struct gcsauth *ga, struct buf *out);

#endif
