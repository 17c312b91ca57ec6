/*
 * testutil — helpers the unit tests share; see testutil.h.
 */
#include "testutil.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <jansson.h>

#if defined(__SANITIZE_ADDRESS__)
/* the ASan runtime's (sanitizer/allocator_interface.h, not always
 * installed) */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#include "backends/engine.h"

#include "mount/mount.h"
#include "policy/delete.h"

int64_t tu_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void tu_sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000,
			      .tv_nsec = (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

int tu_load(const char *dir, const char *name, char **out, size_t *len)
{
	char path[512];
	FILE *f;
	char *data;
	long n;
	int rc = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s%s", dir, name) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0) {
		rc = -errno;
		fclose(f);
		return rc;
	}
	rewind(f);
	data = malloc((size_t)n + 1);
	if (!data) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(data, 1, (size_t)n, f) != (size_t)n) {
		rc = ferror(f) ? -EIO : -ENODATA;
		free(data);
		fclose(f);
		return rc;
	}
	fclose(f);
	data[n] = '\0';
	*out = data;
	if (len)
		*len = (size_t)n;
	return 0;
}

const char *tu_metric(const struct engine_job *j, const char *k)
{
	static char v[128];
	json_t *m = engine_job_metrics(j);
	const char *s = json_string_value(json_object_get(m, k));

	if (s)
		snprintf(v, sizeof(v), "%s", s);
	json_decref(m);
	return s ? v : NULL;
}

bool tu_has_metrics(const struct engine_job *j)
{
	json_t *m = engine_job_metrics(j);

	json_decref(m);
	return m != NULL;
}

int tu_rmtree(const char *dir)
{
	char cmd[600];

	if ((size_t)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir) >=
	    sizeof(cmd))
		return -1;
	return system(cmd) == 0 ? 0 : -1;
}

void tu_mount_free(struct stfs *fs)
{
	delete_detach(fs);
	stfs_release(fs);
	conf_release(&fs->conf);
}

size_t tu_heap_used(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
#endif
}
