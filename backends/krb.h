/*
 * krb — the daemon's Kerberos client identity, for SPNEGO (README "HDFS",
 * Kerberos).  One identity per process: the keytab is used without a manual
 * kinit through MIT krb5's client keytab (KRB5_CLIENT_KTNAME) and a private
 * MEMORY: credential cache (KRB5CCNAME) initialised with the principal, so
 * that libcurl's GSS-API negotiate logs in as that principal and gets new
 * tickets from the keytab when they expire.
 *
 * Threads: krb_client_init() sets environment variables and must run before
 * any thread starts (be_open() in main(), before fuse_main()).  Nothing
 * secret is logged: principal and keytab path only.
 */
#ifndef STFS_KRB_H
#define STFS_KRB_H

#include <stddef.h>

/**
 * Set up the process's Kerberos client identity: `principal` (may be NULL:
 * the keytab's first entry) from `keytab` (an absolute path).  Asks the KDC
 * for a first ticket so that a wrong keytab is told at once.
 * 0: ready; 1: set up, but no ticket now (`why` says why: a stale key, an
 * unknown principal, no KDC; calls will be refused 401); -EINVAL: the
 * keytab cannot be read, or another identity is already set up (`why`);
 * -ENOMEM.  A second call with the same identity returns the first one's
 * result.
 */
int krb_client_init(const char *principal, const char *keytab, char *why,
		    size_t whylen);

/** The short name of the principal ("stfs" of stfs/host@REALM), or NULL. */
const char *krb_client_user(void);

#endif
