/*
 * krb.c — the daemon's Kerberos client identity (see krb.h): MIT krb5's
 * client keytab and a private MEMORY: ccache, set up once before threads.
 */
#include "backends/krb.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <krb5.h>

static struct {
	bool done;
	int rc;
	char *principal, *keytab, *user;
	char why[256];
	krb5_context ctx;
	krb5_ccache cc; /* kept open: the MEMORY: cache lives with it */
} kc;

static void set_why(char *why, size_t whylen, const char *msg)
{
	if (why && whylen)
		snprintf(why, whylen, "%s", msg);
}

static void krb_msg(krb5_error_code e, const char *what)
{
	const char *m = krb5_get_error_message(kc.ctx, e);

	snprintf(kc.why, sizeof(kc.why), "%s: %s", what, m ? m : "error");
	krb5_free_error_message(kc.ctx, m);
}

/*
 * Check that the keytab gets a ticket: 0, or 1 with kc.why.  The ticket is
 * not kept: GSS-API gets its own from the client keytab into the cache
 * (initialised with the principal) and refreshes it before it expires.
 */
static int first_ticket(krb5_principal princ)
{
	krb5_keytab kt = NULL;
	krb5_creds creds;
	krb5_error_code e;

	memset(&creds, 0, sizeof(creds));
	e = krb5_kt_resolve(kc.ctx, kc.keytab, &kt);
	if (e) {
		krb_msg(e, "keytab");
		return 1;
	}
	e = krb5_get_init_creds_keytab(kc.ctx, &creds, princ, kt, 0, NULL,
				       NULL);
	if (e)
		krb_msg(e, "no ticket");
	else
		krb5_free_cred_contents(kc.ctx, &creds);
	krb5_kt_close(kc.ctx, kt);
	return e ? 1 : 0;
}

static int setup(const char *principal)
{
	krb5_principal princ = NULL;
	krb5_error_code e;
	char ccname[64], *unparsed = NULL;
	int rc;

	if (access(kc.keytab, R_OK) != 0) {
		snprintf(kc.why, sizeof(kc.why), "keytab %s: %s", kc.keytab,
			 strerror(errno));
		return -EINVAL;
	}
	snprintf(ccname, sizeof(ccname), "MEMORY:stfs-%ld", (long)getpid());
	if (setenv("KRB5_CLIENT_KTNAME", kc.keytab, 1) ||
	    setenv("KRB5CCNAME", ccname, 1))
		return -ENOMEM;
	e = krb5_init_context(&kc.ctx);
	if (e) {
		snprintf(kc.why, sizeof(kc.why), "krb5: cannot initialise (%d)",
			 (int)e);
		return -EINVAL;
	}
	if (principal) {
		e = krb5_parse_name(kc.ctx, principal, &princ);
	} else {
		/* the keytab's first entry */
		krb5_keytab kt = NULL;
		krb5_kt_cursor cur;
		krb5_keytab_entry ent;

		e = krb5_kt_resolve(kc.ctx, kc.keytab, &kt);
		if (!e)
			e = krb5_kt_start_seq_get(kc.ctx, kt, &cur);
		if (!e) {
			e = krb5_kt_next_entry(kc.ctx, kt, &ent, &cur);
			if (!e) {
				e = krb5_copy_principal(kc.ctx, ent.principal,
							&princ);
				krb5_free_keytab_entry_contents(kc.ctx, &ent);
			}
			krb5_kt_end_seq_get(kc.ctx, kt, &cur);
		}
		if (kt)
			krb5_kt_close(kc.ctx, kt);
	}
	if (e) {
		krb_msg(e, principal ? "principal" : "keytab");
		return -EINVAL;
	}
	e = krb5_unparse_name(kc.ctx, princ, &unparsed);
	if (!e) {
		free(kc.principal);
		kc.principal = strdup(unparsed);
		krb5_free_unparsed_name(kc.ctx, unparsed);
	}
	if (!e && princ->length > 0) {
		kc.user = strndup(princ->data[0].data, princ->data[0].length);
		if (!kc.user)
			e = ENOMEM;
	}
	if (!e)
		e = krb5_cc_resolve(kc.ctx, ccname, &kc.cc);
	if (!e)
		e = krb5_cc_initialize(kc.ctx, kc.cc, princ);
	if (e) {
		krb_msg(e, "credential cache");
		krb5_free_principal(kc.ctx, princ);
		return -EINVAL;
	}
	rc = first_ticket(princ);
	krb5_free_principal(kc.ctx, princ);
	return rc;
}

int krb_client_init(const char *principal, const char *keytab, char *why,
		    size_t whylen)
{
	if (principal && !*principal)
		principal = NULL;
	if (kc.done) {
		if (strcmp(kc.keytab, keytab) ||
		    (principal && kc.principal &&
		     strcmp(kc.principal, principal))) {
			set_why(why, whylen,
				"one Kerberos identity per mount: checkpoint "
				"and imap name different ones");
			return -EINVAL;
		}
		set_why(why, whylen, kc.why);
		return kc.rc;
	}
	kc.keytab = strdup(keytab);
	if (!kc.keytab)
		return -ENOMEM;
	kc.done = true;
	kc.rc = setup(principal);
	if (!kc.principal && principal)
		kc.principal = strdup(principal);
	set_why(why, whylen, kc.why);
	return kc.rc;
}

const char *krb_client_user(void)
{
	return kc.user;
}
