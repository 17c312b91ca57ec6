/*
 * webhdfs_json — pure parsers for the WebHDFS answers the webhdfs backend
 * reads (jansson): FileStatuses (LISTSTATUS), DirectoryListing
 * (LISTSTATUS_BATCH), FileStatus (GETFILESTATUS), {"boolean":…} (DELETE),
 * RemoteException; and the one table mapping a RemoteException's
 * `exception` to an errno (README "HDFS").
 *
 * No I/O, no globals.  Hostile input is expected: entries that are not
 * objects, with no string pathSuffix, a pathSuffix holding '/' or a control
 * character, "." or "..", a type other than FILE/DIRECTORY/SYMLINK, or a
 * negative/huge length, are skipped and counted in n_bad.  A document that
 * is not JSON or not of the expected shape is -EPROTO.  Bodies over
 * WHJ_MAX are refused (-EFBIG).
 *
 * Ownership: results are malloc'd into the caller's struct and freed by
 * whj_list_release().  Thread-safe.
 */
#ifndef STFS_WEBHDFS_JSON_H
#define STFS_WEBHDFS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WHJ_MAX ((size_t)32 << 20)

enum whj_type {
	WHJ_FILE = 1,
	WHJ_DIR = 2,
	WHJ_SYMLINK = 3,
};

struct whj_entry {
	char *name; /* pathSuffix; "" for GETFILESTATUS and a listed file */
	enum whj_type type;
	uint64_t length;
	int64_t mtime_ms; /* modificationTime; 0 when absent */
};

struct whj_list {
	struct whj_entry *ents; /* in document (= name) order */
	size_t n;
	uint64_t remaining; /* remainingEntries (batch); 0 for LISTSTATUS */
	bool batch;	    /* the answer was a DirectoryListing */
	size_t n_bad;	    /* entries skipped */
};

/**
 * Parse a LISTSTATUS or LISTSTATUS_BATCH answer.  `out` is overwritten.
 * 0; -EPROTO (not such a document); -EFBIG; -ENOMEM.  On error `out` is
 * empty.
 */
int whj_parse_list(const char *json, size_t len, struct whj_list *out);
void whj_list_release(struct whj_list *l);

/**
 * Parse a GETFILESTATUS answer; out->name is NULL (not allocated).
 * 0; -EPROTO; -EFBIG.
 */
int whj_parse_status(const char *json, size_t len, struct whj_entry *out);

/** Parse {"boolean": true|false}.  0 with *val set; -EPROTO. */
int whj_parse_boolean(const char *json, size_t len, bool *val);

#define WHJ_TOKEN_MAX 2048

/**
 * Parse a GETDELEGATIONTOKEN answer {"Token":{"urlString":"…"}} into `out`
 * (size `outsz`, at most WHJ_TOKEN_MAX): the urlString, URL-safe base64
 * only ([A-Za-z0-9_-]).  0; -EPROTO (not such a document, "Token": null, a
 * character outside that set, or too long).  The token is a secret.
 */
int whj_parse_token(const char *json, size_t len, char *out, size_t outsz);

/** Parse {"long": N} (RENEWDELEGATIONTOKEN's new expiry, ms).  0; -EPROTO. */
int whj_parse_long(const char *json, size_t len, int64_t *val);

struct whj_error {
	char exception[80]; /* "FileNotFoundException"; "" when absent */
	char message[200];  /* truncated; control characters replaced */
};

/**
 * Parse a {"RemoteException":{…}} body.  0 with out filled; -EPROTO when
 * the body is not one (out is then empty strings; a 401 from a SPNEGO
 * filter is HTML).
 */
int whj_parse_error(const char *json, size_t len, struct whj_error *out);

/* what a RemoteException means for the caller */
#define WHJ_FAILOVER 0x1 /* this namenode cannot serve: try the next one */
#define WHJ_RETRY    0x2 /* transient on this namenode: retry later */

/**
 * The errno of a RemoteException name (the one table): FileNotFound →
 * -ENOENT, AccessControl/Security/Authentication/InvalidToken → -EACCES,
 * Standby → -EAGAIN with WHJ_FAILOVER, Retriable/SafeMode → -EAGAIN with
 * WHJ_RETRY, PathIsNotEmptyDirectory → -ENOTEMPTY, FileAlreadyExists →
 * -EEXIST, ParentNotDirectory → -ENOTDIR, IllegalArgument/InvalidPath →
 * -EINVAL, UnsupportedOperation → -ENOSYS, QuotaExceeded → -EDQUOT.
 * Returns 0 for an unknown or empty name (the caller then maps the HTTP
 * status).  `*flags` (may be NULL) receives WHJ_*.
 */
int whj_exception_errno(const char *exception, unsigned *flags);

#endif
