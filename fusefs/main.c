/*
 * main — stfs [options] MOUNTPOINT
 *
 * Order (sshfs): defaults, options, config file, imports, cross-checks,
 * sources, then ops_main() (the FUSE session).  Anything wrong before the mount
 * is printed as "stfs: FILE:LINE: reason" (or "stfs: -o key: reason") and exits
 * 1; after the mount nothing exits.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/audit.h"
#include "model/ckinfo.h"
#include "backends/engine.h"
#include "backends/http.h"
#include "policy/delete.h"
#include "util/log.h"
#include "util/buf.h"
#include "conf/conf.h"
#include "fusefs/notify.h"
#include "fusefs/ops.h"
#include "policy/release.h"
#include "fusefs/signals.h"
#include "mount/mount.h"
#include "view/tree.h"

#define MAX_CLI_OPTS 128

struct cli {
	char *config;
	char *keys[MAX_CLI_OPTS];
	char *vals[MAX_CLI_OPTS];
	int n;
	bool help, version, foreground, debug;
	bool bad;
};

enum { KEY_HELP, KEY_VERSION, KEY_FOREGROUND, KEY_DEBUG };

static const struct fuse_opt cli_spec[] = {
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_KEY("-f", KEY_FOREGROUND),
	FUSE_OPT_KEY("-d", KEY_DEBUG),
	FUSE_OPT_KEY("debug", KEY_DEBUG),
	FUSE_OPT_END,
};

static int cli_proc(void *data, const char *arg, int key,
		    struct fuse_args *outargs)
{
	struct cli *cli = data;
	struct stfs_conf probe;
	struct conf_err err;
	char *k, *eq;
	int rc;

	(void)outargs;
	switch (key) {
	case KEY_HELP:
		cli->help = true;
		return 0;
	case KEY_VERSION:
		cli->version = true;
		return 0;
	case KEY_FOREGROUND:
		cli->foreground = true;
		return 1;
	case KEY_DEBUG:
		cli->debug = cli->foreground = true;
		return 1;
	case FUSE_OPT_KEY_OPT:
		break;
	case FUSE_OPT_KEY_NONOPT:
		/* the mount point (drop_mount_source removed a device) */
		return notify_set_mountpoint(arg) ? -1 : 1;
	default:
		return 1;
	}
	k = strdup(arg);
	if (!k)
		return -1;
	eq = strchr(k, '=');
	if (eq)
		*eq++ = '\0';
	if (strcmp(k, "config") == 0) {
		free(cli->config);
		cli->config = eq ? strdup(eq) : NULL;
		free(k);
		if (!cli->config) {
			fprintf(stderr, "stfs: -o config: needs a file\n");
			cli->bad = true;
		}
		return 0;
	}
	/* is it one of ours?  ask conf on a scratch copy */
	memset(&probe, 0, sizeof(probe));
	conf_init_defaults(&probe);
	rc = conf_set(&probe, k, eq ? eq : "", &err);
	conf_release(&probe);
	if (rc == -ENOENT) {
		free(k);
		return 1; /* a FUSE / mount option */
	}
	/* secrets are refused on the command line: argv is world-readable */
	if (conf_key_is_secret(k)) {
		fprintf(stderr,
			"stfs: -o %s: secrets are not accepted on the command "
			"line (argv is visible to every user); put it in the "
			"config file (mode 0600) or the environment\n",
			k);
		cli->bad = true;
		free(k);
		return 0;
	}
	if (cli->n == MAX_CLI_OPTS) {
		fprintf(stderr, "stfs: too many options\n");
		cli->bad = true;
		free(k);
		return 0;
	}
	cli->keys[cli->n] = k;
	cli->vals[cli->n] = eq ? strdup(eq) : NULL;
	cli->n++;
	return 0;
}

static void usage(const char *prog)
{
	struct buf b;

	printf("usage: %s [options] MOUNTPOINT\n\n"
	       "Mounts an Apache SeaTunnel (Zeta) cluster's state: checkpoint "
	       "storage merged\nwith the engine's REST API v2, as "
	       "MOUNTPOINT/jobs/<id>/pipelines/<pid>/checkpoints/<cid>.\n\n"
	       "stfs options (-o key=value, or `key = value` lines in -o "
	       "config=FILE):\n"
	       "    -o %-28s read options from FILE (command line wins)\n",
	       prog, "config=FILE");
	/* one line per key of conf's table (conf/conf.c) */
	buf_init(&b, BUF_DEFAULT_MAX);
	if (conf_usage(&b) == 0 && b.data)
		fputs(b.data, stdout);
	buf_release(&b);
	printf("\nSee stfs(1).  FUSE options:\n");
}

/* Interrupts only need to wake a blocked system call (EINTR). */
static void ignore_signal(int sig)
{
	(void)sig;
}

static int die_conf(const struct conf_err *e, const char *what)
{
	if (e->file[0] && e->line)
		fprintf(stderr, "stfs: %s:%d: %s\n", e->file, e->line, e->msg);
	else if (e->file[0])
		fprintf(stderr, "stfs: %s: %s\n", e->file, e->msg);
	else
		fprintf(stderr, "stfs: %s: %s\n", what, e->msg);
	return 1;
}

/* Every source in its precedence; on failure `err` and `what` say why. */
static int configure_into(const struct cli *cli, struct stfs_conf *c,
			  struct conf_err *err, char *what, size_t what_sz)
{
	memset(err, 0, sizeof(*err));
	snprintf(what, what_sz, "configuration");
	if (conf_init_defaults(c))
		return -ENOMEM;
	if (cli->config && conf_load_file(c, cli->config, err)) {
		snprintf(what, what_sz, "%s", cli->config);
		goto fail;
	}
	for (int i = 0; i < cli->n; i++) {
		memset(err, 0, sizeof(*err));
		snprintf(what, what_sz, "-o %s", cli->keys[i]);
		if (conf_set(c, cli->keys[i], cli->vals[i] ? cli->vals[i] : "",
			     err))
			goto fail;
	}
	/* seatunnel.yaml, hazelcast.yaml, then credentials from the
	 * environment; explicit keys win over all of them */
	snprintf(what, what_sz, "import");
	if (conf_apply_imports(c, err))
		goto fail;
	/* a short timeout= shortens the default connect timeout with it */
	if (!conf_is_explicit(c, "connect_timeout") &&
	    c->connect_timeout_ms > c->timeout_ms)
		c->connect_timeout_ms = c->timeout_ms;
	snprintf(what, what_sz, "configuration");
	if (conf_validate(c, err))
		goto fail;
	return 0;
fail:
	conf_release(c);
	return -EINVAL;
}

static int configure(const struct cli *cli, struct stfs_conf *c)
{
	struct conf_err err;
	char what[300];

	if (configure_into(cli, c, &err, what, sizeof(what)))
		return die_conf(&err, what);
	return 0;
}

/* SIGHUP (fusefs/signals.c): the same sources again, for a fresh conf */
static const struct cli *reload_cli;
static int reload_conf(struct stfs_conf *out, char *msg, size_t n)
{
	struct conf_err err;
	char what[300];

	if (configure_into(reload_cli, out, &err, what, sizeof(what)) == 0)
		return 0;
	if (err.file[0] && err.line)
		snprintf(msg, n, "%s:%d: %s", err.file, err.line, err.msg);
	else
		snprintf(msg, n, "%s: %s", err.file[0] ? err.file : what,
			 err.msg);
	return -EINVAL;
}

static void cli_release(struct cli *cli)
{
	for (int i = 0; i < cli->n; i++) {
		free(cli->keys[i]);
		free(cli->vals[i]);
	}
	free(cli->config);
}

/*
 * mount(8) with an fstab line "stfs /mnt/st fuse.stfs opts" runs
 * "stfs stfs /mnt/st -o opts": two positional arguments, of which the
 * first (the "device") means nothing to stfs.  Drop it.
 */
static int drop_mount_source(int argc, char *argv[])
{
	int pos[3], n = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0) {
			i++;
			continue;
		}
		if (argv[i][0] == '-')
			continue;
		if (n == 3)
			return argc;
		pos[n++] = i;
	}
	if (n != 2)
		return argc;
	memmove(&argv[pos[0]], &argv[pos[0] + 1],
		(size_t)(argc - pos[0]) * sizeof(*argv));
	return argc - 1;
}

int main(int argc, char *argv[])
{
	struct fuse_args args =
		FUSE_ARGS_INIT(drop_mount_source(argc, argv), argv);
	static struct stfs fs;
	struct cli cli;
	int rc, ret = 1;

	memset(&cli, 0, sizeof(cli));
	if (fuse_opt_parse(&args, &cli, cli_spec, cli_proc) == -1 || cli.bad)
		goto out_args;
	if (cli.help) {
		usage(argv[0]);
		fuse_cmdline_help();
		fuse_lowlevel_help();
		ret = 0;
		goto out_args;
	}
	if (cli.version) {
		printf("stfs %s (libfuse %s)\n", STFS_VERSION,
		       fuse_pkgversion());
		ret = 0;
		goto out_args;
	}
	if (configure(&cli, &fs.conf))
		goto out_conf;
	log_set_level(log_level_parse(fs.conf.log_level));
	log_setup(true, !cli.foreground, cli.debug);
	if (http_global_init()) {
		fprintf(stderr, "stfs: cannot initialise libcurl\n");
		goto out_conf;
	}
	if (stfs_init(&fs) || delete_attach(&fs)) {
		fprintf(stderr, "stfs: out of memory\n");
		goto out_fs;
	}
	/* releases of jobs running again are voided where the engine's
	 * answer arrives, never by a read */
	delete_watch_engine(&fs);
	/* the deletion path learns what a path is from the tree */
	delete_set_resolver(&fs, tree_delete_node);
	rc = be_open(fs.conf.checkpoint, &fs.conf, &fs.ckpt);
	if (rc) {
		fprintf(stderr, "stfs: checkpoint=%s: %s\n", fs.conf.checkpoint,
			rc == -EPERM ? "refused (see above and stfs(1), "
				       "SECURITY)"
				     : strerror(-rc));
		goto out_fs;
	}
	if (fs.conf.imap) {
		rc = be_open(fs.conf.imap, &fs.conf, &fs.imap);
		if (rc) {
			fprintf(stderr, "stfs: imap=%s: %s (imap/ disabled)\n",
				fs.conf.imap, strerror(-rc));
			fs.imap = NULL;
		}
	}
	rc = release_open(fs.conf.state_dir, fs.conf.checkpoint, &fs.rel);
	if (rc) {
		fprintf(stderr,
			"stfs: state_dir=%s: %s (releases are impossible until "
			"it is usable)\n",
			fs.conf.state_dir, strerror(-rc));
		fs.rel = NULL;
	}
	if (fs.rel) {
		rc = ckinfo_persist(fs.ck, fs.conf.state_dir,
				    fs.conf.checkpoint);
		if (rc)
			fprintf(stderr,
				"stfs: state_dir=%s: checkpoint type cache: %s\n",
				fs.conf.state_dir, strerror(-rc));
	}
	rc = audit_open(fs.conf.audit_log, (size_t)4 << 20, &fs.audit);
	if (rc) {
		fprintf(stderr, "stfs: audit_log=%s: %s\n", fs.conf.audit_log,
			strerror(-rc));
		goto out_fs;
	}
	rc = conf_protect_secrets(&fs.conf);
	if (rc < 0) {
		fprintf(stderr, "stfs: cannot disable core dumps: %s\n",
			strerror(-rc));
		goto out_fs;
	}
	rc = engine_new(&fs.conf, &fs.engine);
	if (rc) {
		fprintf(stderr, "stfs: engine: %s\n", strerror(-rc));
		goto out_fs;
	}
	engine_set_storage_ids(fs.engine, stfs_storage_ids, &fs);
	http_set_abort_check(ops_interrupted);
	/* an interrupted request's thread is sent SIGUSR1 (ops.c, as libfuse's
	 * "-o intr" did): that must not kill the daemon */
	if (sigaction(SIGUSR1, &(struct sigaction){.sa_handler = ignore_signal},
		      NULL))
		goto out_fs;
	if (fuse_opt_add_arg(&args,
			     "-ofsname=stfs,subtype=stfs,max_threads=32"))
		goto out_fs;
	/* SIGHUP and SIGUSR2 go to one thread (fusefs/signals.c), started by
	 * the filesystem's init once daemonized; blocked before any thread */
	reload_cli = &cli;
	signals_prepare(&fs, reload_conf);
	if (signals_block())
		goto out_fs;
	ret = ops_main(&args, &fs);
	notify_stopping();
	signals_stop();
out_fs:
	delete_detach(&fs);
	stfs_release(&fs);
	http_global_cleanup();
out_conf:
	conf_release(&fs.conf);
out_args:
	cli_release(&cli);
	fuse_opt_free_args(&args);
	return ret;
}
