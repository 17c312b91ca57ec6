/*
 * prom — Prometheus text exposition format 0.0.4 for job metrics
 * (CONTRACT §5): the engine's job metrics (per-table ones with a `table`
 * label), the job state, and storage figures (objects, bytes, newest
 * checkpoint time).  Output passes `promtool check metrics`: one HELP and
 * one TYPE line per family, all samples of a family together, label
 * values escaped, names sanitised, values as Prometheus floats.
 *
 * Pure: renders from its arguments into a buf; thread-safe.
 */
#ifndef STFS_PROM_H
#define STFS_PROM_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "buf.h"

struct prom_job {
	const char *id;        /* job id (label job_id) */
	const char *name;      /* job name (label job_name), or NULL */
	int state;             /* enum job_state */
	json_t *metrics;       /* engine metrics object (string-valued leaves), or NULL */
	/* storage figures; has_storage false when storage knows no such job */
	int has_storage;
	uint64_t objects;
	uint64_t bytes;
	uint64_t tmp_objects;
	int64_t newest_ckpt_ms; /* 0 when none */
	uint64_t pipelines;
	uint64_t checkpoints;
};

/**
 * Render `n` jobs family by family.  0; -EFBIG/-ENOMEM from the buffer.
 * Engine metrics that are missing or not numeric are skipped, never
 * rendered as garbage.
 */
int prom_render_jobs(struct buf *out, const struct prom_job *jobs, size_t n);

/** Append `s` escaped as a label value (\\, \", \n). */
int prom_escape_label(struct buf *out, const char *s);

/**
 * Convert an engine metric name ("SourceReceivedQPS") to a Prometheus
 * name ("seatunnel_job_source_received_qps") into out (NUL-terminated).
 */
void prom_metric_name(const char *engine_name, char *out, size_t outsz);

#endif
