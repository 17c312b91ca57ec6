/*
 * prom — Prometheus text exposition format 0.0.4 for job metrics
 * (README "IMap summaries"): the engine's job metrics (per-table ones with a
 * `table` label), the job state, and storage figures (objects, bytes, newest
 * checkpoint time).  Output passes `promtool check metrics` (2.42, Debian
 * package `prometheus`) with no lint warning, for any metric keys: one HELP
 * and one TYPE line per family, all samples of a
 * family together, label values escaped, names sanitised, values as
 * Prometheus floats.
 *
 * Naming (engine key -> family):
 *   - scalar key K: seatunnel_job_<snake(K)>, labels {job_id, job_name}
 *     ("SourceReceivedQPS" -> seatunnel_job_source_received_qps);
 *   - object key K ({"<table>":"<value>"}): seatunnel_job_table_<snake(K
 *     without a leading "Table")>, labels {job_id, job_name, table}; the
 *     table label is the engine's key verbatim ("Source[0].db.table" too);
 *   - snake(): lower case, '_' at word boundaries ("QPS" stays one word),
 *     any other character becomes '_', runs of '_' collapse;
 *   - TYPE counter when the snake name ends in _count, _bytes or _total
 *     (the cumulative sums); the family name then ends in _total
 *     (seatunnel_job_sink_write_bytes_total,
 *     seatunnel_job_source_received_count_total).  Everything else
 *     (QPS, BytesPerSeconds, IntermediateQueueSize, unknown keys) is a
 *     gauge; a gauge name that would end in _sum or _bucket gets "_value".
 *   - a name segment promtool would lint (unit abbreviation "ms", type
 *     name "gauge", non-base unit "milliseconds"/"hours") is glued to the
 *     segment before it ("LatencyMs" -> seatunnel_job_latencyms) or, when
 *     that does not help, gets "value" appended ("S" -> seatunnel_job_svalue);
 *   - job_name is left out when unknown (NULL).
 * Fixed families: seatunnel_job_state{job_id,job_name,state} 1 (jobs with
 * a state_name), and for jobs with has_storage: stfs_job_storage_objects,
 * stfs_job_storage_bytes, stfs_job_storage_inflight_objects,
 * stfs_job_pipelines, stfs_job_checkpoints (gauges) and
 * stfs_job_newest_checkpoint_timestamp_seconds (only newest_ckpt_ms > 0,
 * exact millisecond decimal).
 * Values: integer text of up to int64 is copied exactly (normalised:
 * "007" -> "7"); other decimals (Java's "1.0E-4" too) and JSON numbers are
 * printed in the shortest %g form that reads back to the same double.
 * NaN, infinities, hex, empty, booleans, null and anything else are skipped.
 * Order: families sorted by name (bytes); within a family jobs sorted by id
 * (shorter first, then bytes, so numeric ids sort numerically), tables
 * sorted by name.  A family without samples is not written at all.  Two
 * engine keys that map to one family name: the fixed family wins, then the
 * byte-smaller key; the other key is dropped.  Jobs with a NULL id or an id
 * already seen are skipped.  Invalid UTF-8 in labels becomes U+FFFD.
 *
 * Pure: renders from its arguments into a buf; thread-safe (numbers are
 * parsed and printed in the C locale whatever the process locale is).
 */
#ifndef STFS_PROM_H
#define STFS_PROM_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "util/buf.h"
#include "policy/imapsum.h"

struct prom_job {
	const char *id;	  /* job id (label job_id); NULL: job skipped */
	const char *name; /* job name (label job_name), or NULL */
	/* job_state_name() of its state ("RUNNING"), or NULL: no
	 * seatunnel_job_state sample */
	const char *state_name;
	json_t *metrics; /* engine metrics object (string-valued leaves), or
			    NULL: then metrics_text is parsed */
	/* the metrics object as JSON text (borrowed), or NULL: parsed for
	 * this job's series only and freed before the next job's (README
	 * "Memory") */
	const char *metrics_text;
	size_t metrics_len;
	/* storage figures; has_storage false when storage knows no such job */
	int has_storage;
	uint64_t objects;
	uint64_t bytes;
	uint64_t tmp_objects;
	int64_t newest_ckpt_ms; /* 0 when none */
	uint64_t pipelines;
	uint64_t checkpoints;
	uint64_t restore_points;   /* pipelines with a restore point */
	int64_t oldest_restore_ms; /* oldest restore point's write time */
	int64_t ckpt_interval_ms;  /* the job's checkpoint.interval, 0 */
	int dead; /* an end state or ORPHAN: what it holds may be reclaimable */
	int orphan;
};

/*
 * The cluster-wide series stfs.prom adds after the jobs' (README
 * "Prometheus"): stfs_dead_jobs_storage_bytes (storage of jobs in an end
 * state or ORPHAN), stfs_dead_jobs (their count) and stfs_orphan_jobs.
 * 0 or -EFBIG/-ENOMEM from buf.
 */
int prom_render_summary(struct buf *out, const struct prom_job *jobs, size_t n);

/* One IMap map (imap/<cluster>/<map>) and its figures. */
struct prom_imap_map {
	const char *cluster;
	const char *map;
	struct imapsum_fig fig;
};

/*
 * The IMap WAL series (README "Prometheus", "Reclaiming IMap WAL space"),
 * labels {cluster, map}: stfs_imap_wal_bytes (all WAL files),
 * stfs_imap_reclaimable_bytes (regions whose verdict is removable: what
 * `rm -r` accepts now), stfs_imap_superseded_bytes (superseded regions
 * that are not live: what becomes removable once every member is
 * stopped), stfs_imap_load_failed (1: the engine would fail to load the
 * map), and stfs_imap_regions{cluster,map,verdict} (regions per verdict,
 * every verdict of imapsum_verdicts, zeros included).  Maps in the given
 * order; n == 0 appends nothing.  0 or -EFBIG/-ENOMEM from buf.
 */
int prom_render_imap(struct buf *out, const struct prom_imap_map *maps,
		     size_t n);

/* Longest family name rendered; engine keys that would exceed it are skipped.
 */
#define PROM_NAME_MAX 200

/**
 * Render `n` jobs family by family, appending to `out` (jobs may be NULL
 * when n is 0; n == 0 or nothing renderable appends nothing).  0;
 * -EFBIG/-ENOMEM from the buffer, and then `out` is as it was before the
 * call.  Engine metrics that are missing or not numeric are skipped, never
 * rendered as garbage.  Borrows everything; keeps nothing.  Reads the jobs
 * one at a time: at most one job's metrics tree (parsed from metrics_text)
 * is alive, and the text is built in per-family bodies joined at the end.
 */
int prom_render_jobs(struct buf *out, const struct prom_job *jobs, size_t n);

/**
 * Append `s` escaped as a label value (\\, \", \n), invalid UTF-8 replaced
 * by U+FFFD.  0; -EFBIG/-ENOMEM (then out may hold part of the value).
 */
int prom_escape_label(struct buf *out, const char *s);

/**
 * Convert an engine metric name ("SourceReceivedQPS") to a Prometheus
 * base name ("seatunnel_job_source_received_qps") into out (NUL-terminated;
 * no _total suffix: that is added by the renderer for counters).  When the
 * name does not fit in outsz, or has no letter or digit, out is "".
 */
void prom_metric_name(const char *engine_name, char *out, size_t outsz);

#endif
