/*
 * fake_engine — a scripted engine behind the seam of backends/engine.h.
 *
 * The job lists (what engine_jobs() returns) are scripted as JSON arrays in
 * the REST API's shape (/running-jobs, /finished-jobs) or job by job; every
 * engine_jobs() call returns a fresh snapshot built from the script, so a
 * test may change a job's state between two calls.  /job-info/<id> answers
 * come from the job lists (absent: -ENOENT) unless an answer is scripted
 * for that id (a state and finish time, or an -errno).  Raw documents
 * (engine_get_raw, engine_ckpt_monitor) are scripted by path.  Every op
 * can be made to fail on demand (-EAGAIN, -ETIMEDOUT, ...), and every op
 * is counted.
 *
 * Ownership: fake_engine_new() returns an engine to be freed with
 * engine_free() (stfs_release() does it for a mount's engine).
 * Threads: every function is safe to call concurrently (one mutex).
 */
#ifndef STFS_FAKE_ENGINE_H
#define STFS_FAKE_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/engine.h"

enum fake_eng_op {
	FENG_JOBS = 0,
	FENG_JOB_INFO,
	FENG_GET_RAW,
	FENG_CKPT_MONITOR,
	FENG_N_OPS,
};

/** A fresh engine that knows no job.  0 or -ENOMEM. */
int fake_engine_new(struct engine **out);

/**
 * Append the jobs of `json` (an array of job objects, as /finished-jobs
 * (running false) or /running-jobs (true) answer) to the lists.  0, or
 * -EPROTO when it does not parse.
 */
int fake_engine_add_json(struct engine *e, const char *json, bool running);
/**
 * Add job `id`, or replace it, in state `state` (enum job_state) with
 * finish time `finish_s` (epoch seconds, 0: none); a job in no end state
 * goes to the running list.  0; -EINVAL; -ENOMEM.
 */
int fake_engine_set_job(struct engine *e, const char *id, int state,
			int64_t finish_s);
/** Take job `id` out of the lists (the engine forgot it). */
void fake_engine_drop_job(struct engine *e, const char *id);
/**
 * Make the list fetch fail: engine_jobs() returns snapshots with `err`
 * set (a negative errno, 0 clears) and `msg`, and still the scripted jobs
 * (the last ones known, like the REST client's failed refresh).
 */
void fake_engine_set_list_err(struct engine *e, int err, const char *msg);
/** data_ms of the snapshots (default: the wall time of each call). */
void fake_engine_set_data_ms(struct engine *e, int64_t data_ms);

/**
 * Script the /job-info/<id> answer: rc 0 answers `state` and `finish_s`;
 * -ENOENT "no such job"; any other -errno "could not tell".  Wins over the
 * job lists.  0; -ENOMEM.
 */
int fake_engine_set_info(struct engine *e, const char *id, int rc, int state,
			 int64_t finish_s);
/** Forget every scripted /job-info answer. */
void fake_engine_clear_info(struct engine *e);

/** Script the document engine_get_raw(path) answers (NULL: forget it). */
int fake_engine_set_raw(struct engine *e, const char *path, const char *body);

/**
 * Make every call of `op` fail with `err` (a negative errno; 0 clears):
 * FENG_JOBS gives failed snapshots (as set_list_err), the others return
 * it.  Wins over everything scripted.
 */
void fake_engine_fail(struct engine *e, enum fake_eng_op op, int err);
/**
 * Make every call of `op` take `ms` before it answers (0: at once), as a
 * remote that waits out its deadline.  Only FENG_JOB_INFO honours it.
 */
void fake_engine_delay(struct engine *e, enum fake_eng_op op, int ms);
/** How many times `op` was called. */
unsigned fake_engine_calls(struct engine *e, enum fake_eng_op op);

#endif
