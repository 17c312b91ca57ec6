/*
 * loopsrv — a tiny loopback HTTP/1.1 server for unit tests (every reply is
 * Connection: close).
 *
 * One thread accepts on 127.0.0.1:<ephemeral port>, reads each request up
 * to the end of its headers, copies it to last_req, counts it in nreq and
 * hands the connection to the test's handler; the connection is closed
 * when the handler returns.  What to answer is entirely the handler's.
 *
 * Ownership: the caller owns the struct loopsrv (embed it or allocate it);
 * loopsrv_open() fills it, loopsrv_stop() joins the thread and closes the
 * listening socket.  Nothing else is allocated.
 * Threads: the handler runs on the server thread.  stop and nreq are
 * atomics; last_req is written by the server thread before the handler
 * runs, so read it once the client has had its reply.  open/run/stop are
 * for the test thread only.
 */
#ifndef STFS_TESTS_LOOPSRV_H
#define STFS_TESTS_LOOPSRV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define LOOPSRV_REQ_MAX 2048

struct loopsrv;

/** Answer one request: `req` is the request line and headers (NUL-ended). */
typedef void (*loopsrv_fn)(struct loopsrv *s, int cfd, const char *req);

struct loopsrv {
	int lfd;
	int port; /* the listening port, host order */
	pthread_t th;
	bool running;	 /* the thread was started and not yet joined */
	atomic_int stop; /* set by loopsrv_stop(); handlers may poll it */
	atomic_int nreq; /* requests read so far */
	loopsrv_fn handle;
	void *arg; /* the handler's, untouched here */
	char last_req[LOOPSRV_REQ_MAX];
};

/**
 * Listen on 127.0.0.1:0 (s->port tells which port) without serving yet,
 * so that the handler's state can be set up first.  0 or -errno (the
 * socket is closed again on failure).
 */
int loopsrv_open(struct loopsrv *s, loopsrv_fn handle, void *arg);
/** Start the server thread.  0 or -errno. */
int loopsrv_run(struct loopsrv *s);
/** loopsrv_open() then loopsrv_run().  0 or -errno. */
int loopsrv_start(struct loopsrv *s, loopsrv_fn handle, void *arg);
/**
 * Stop serving: join the thread, close the listening socket.  Safe to
 * call twice; an opened but never run server is just closed.
 */
void loopsrv_stop(struct loopsrv *s);

/** "http://127.0.0.1:<port><path>" into out (truncated to outsz). */
void loopsrv_url(const struct loopsrv *s, const char *path, char *out,
		 size_t outsz);

/** Send all n bytes, giving up silently when the peer goes away. */
void loopsrv_send_all(int fd, const void *p, size_t n);
/**
 * Send "HTTP/1.1 <status>" with Content-Length, the `extra` header lines
 * (each ending in "\r\n"; NULL for none), Connection: close, then body.
 */
void loopsrv_reply(int fd, int status, const char *extra, const char *body,
		   size_t len);
/** Never answer: wait until the client hangs up or the server stops. */
void loopsrv_hang(struct loopsrv *s, int cfd);

/** A loopback port nothing listens on (just bound and released), or -errno. */
int loopsrv_closed_port(void);

/*
 * cmocka group fixtures for the tests that make requests through
 * backends/http.c: http_global_init() and http_global_cleanup().
 */
int loopsrv_group_setup(void **state);
int loopsrv_group_teardown(void **state);

#endif
