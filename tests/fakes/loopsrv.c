/*
 * loopsrv — a tiny loopback HTTP/1.1 server for unit tests; see loopsrv.h.
 */
#include "loopsrv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backends/http.h"

void loopsrv_send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		c += w;
		n -= (size_t)w;
	}
}

void loopsrv_reply(int fd, int status, const char *extra, const char *body,
		   size_t len)
{
	char h[512];
	int n = snprintf(h, sizeof(h),
			 "HTTP/1.1 %d X\r\nContent-Length: %zu\r\n%s"
			 "Connection: close\r\n\r\n",
			 status, len, extra ? extra : "");

	if (n < 0)
		return;
	if ((size_t)n >= sizeof(h))
		n = (int)sizeof(h) - 1;
	loopsrv_send_all(fd, h, (size_t)n);
	loopsrv_send_all(fd, body, len);
}

void loopsrv_hang(struct loopsrv *s, int cfd)
{
	char b[256];

	while (!atomic_load(&s->stop)) {
		struct pollfd p = {.fd = cfd, .events = POLLIN};

		if (poll(&p, 1, 50) > 0 && recv(cfd, b, sizeof(b), 0) <= 0)
			return; /* the client gave up */
	}
}

/* Read until the end of the headers; 0 when a request arrived. */
static int read_request(struct loopsrv *s, int cfd, char *req, size_t reqsz)
{
	size_t got = 0;

	while (got < reqsz - 1) {
		struct pollfd p = {.fd = cfd, .events = POLLIN};
		ssize_t r;

		if (atomic_load(&s->stop))
			return -EINTR;
		if (poll(&p, 1, 50) <= 0)
			continue;
		r = recv(cfd, req + got, reqsz - 1 - got, 0);
		if (r <= 0)
			return -EIO;
		got += (size_t)r;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n"))
			return 0;
	}
	return 0;
}

static void *srv_main(void *arg)
{
	struct loopsrv *s = arg;

	while (!atomic_load(&s->stop)) {
		struct pollfd p = {.fd = s->lfd, .events = POLLIN};
		char req[LOOPSRV_REQ_MAX];
		int cfd;

		if (poll(&p, 1, 50) <= 0)
			continue;
		cfd = accept(s->lfd, NULL, NULL);
		if (cfd < 0)
			continue;
		if (read_request(s, cfd, req, sizeof(req)) == 0) {
			snprintf(s->last_req, sizeof(s->last_req), "%s", req);
			atomic_fetch_add(&s->nreq, 1);
			s->handle(s, cfd, req);
		}
		close(cfd);
	}
	return NULL;
}

/* A socket bound to 127.0.0.1:0; its port in *port.  fd or -errno. */
static int bind_loopback(int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -errno;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

int loopsrv_open(struct loopsrv *s, loopsrv_fn handle, void *arg)
{
	int fd;

	memset(s, 0, sizeof(*s));
	s->lfd = -1;
	s->handle = handle;
	s->arg = arg;
	fd = bind_loopback(&s->port);
	if (fd < 0)
		return fd;
	if (listen(fd, 64) != 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	s->lfd = fd;
	return 0;
}

int loopsrv_run(struct loopsrv *s)
{
	int rc = pthread_create(&s->th, NULL, srv_main, s);

	if (rc != 0)
		return -rc;
	s->running = true;
	return 0;
}

int loopsrv_start(struct loopsrv *s, loopsrv_fn handle, void *arg)
{
	int rc = loopsrv_open(s, handle, arg);

	if (rc == 0) {
		rc = loopsrv_run(s);
		if (rc != 0)
			loopsrv_stop(s);
	}
	return rc;
}

void loopsrv_stop(struct loopsrv *s)
{
	atomic_store(&s->stop, 1);
	if (s->running) {
		pthread_join(s->th, NULL);
		s->running = false;
	}
	if (s->lfd >= 0) {
		close(s->lfd);
		s->lfd = -1;
	}
}

void loopsrv_url(const struct loopsrv *s, const char *path, char *out,
		 size_t outsz)
{
	snprintf(out, outsz, "http://127.0.0.1:%d%s", s->port, path);
}

int loopsrv_closed_port(void)
{
	int port = 0;
	int fd = bind_loopback(&port);

	if (fd < 0)
		return fd;
	close(fd);
	return port;
}

int loopsrv_group_setup(void **state)
{
	(void)state;
	return http_global_init();
}

int loopsrv_group_teardown(void **state)
{
	(void)state;
	http_global_cleanup();
	return 0;
}
