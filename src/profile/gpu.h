/*
 * The GPU beside a measured program (`bench --gpu`, `profile --gpu`): NVML
 * loaded at run time, sampled on a thread of its own (see gpu.c).
 */
#ifndef PL_GPU_H
#define PL_GPU_H

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/types.h>

/* One reading of one device; a field the driver does not give is < 0. */
struct pl_gpu_sample {
	double t;		      /* seconds since the sampler started */
	int util, mem_util;	      /* percent of the last sample period */
	long long mem_used, mem_total; /* bytes */
	int sm_mhz;
	double power_w;
	long long proc_mem; /* bytes used by the measured processes, < 0 unknown */
};

struct pl_gpu_device {
	char name[96];
	struct pl_gpu_sample *s;
	size_t n, cap;
	char error[200]; /* why sampling stopped early, "" if it did not */
};

struct pl_gpu_api; /* the NVML functions found */

struct pl_gpu {
	void *lib;
	struct pl_gpu_api *api;
	struct pl_gpu_device *dev;
	unsigned ndev;
	double hz;
	volatile pid_t pid; /* the measured process (0: none yet) */
	pthread_t th;
	pthread_mutex_t mu;
	int started, stop;
	double t0;
	char status[240]; /* why there is no GPU section: "" when sampled */
};

/* Load NVML (the environment variable PERFLOOP_NVML_LIB names another
 * library, for tests) and start sampling every device at hz. PL_OK when
 * sampling; otherwise PL_ENOTSUP with g->status one line saying why (no
 * NVML, no device, an error at start), and nothing else happens. */
int pl_gpu_start(struct pl_gpu *g, double hz);
/* The process whose GPU memory to follow (children are not). */
void pl_gpu_set_pid(struct pl_gpu *g, pid_t pid);
/* Stop the thread and unload NVML; the samples stay for what follows. */
void pl_gpu_stop(struct pl_gpu *g);
void pl_gpu_release(struct pl_gpu *g);

struct pl_gpu_stats {
	size_t n;
	double util_mean, util_p50, util_min; /* < 0: not given */
	long long mem_peak, mem_total, proc_mem_peak;
	double sm_mhz_p50, power_mean_w;
};
void pl_gpu_device_stats(const struct pl_gpu_device *d, struct pl_gpu_stats *out);

/* {"available": bool, "status"?, "hz", "devices": [{name, samples, util
 * {mean, p50, min}, memory {peak_bytes, total_bytes, process_peak_bytes},
 * sm_clock_mhz_p50, power_w_mean, error, series {t, util, mem_used}}]} */
json_t *pl_gpu_to_json(const struct pl_gpu *g);
void pl_gpu_print(FILE *f, const struct pl_gpu *g);

/* The mean utilization of the busiest device, < 0 when none was given. */
double pl_gpu_util_mean(const struct pl_gpu *g);

/* "GPU underutilized" (gpu.underutilized, level 3) when the busiest
 * device's mean utilization is under 50% while the training step waits for
 * data more than 0.3 of its time (data_share < 0: not known, no finding).
 * 0 or 1 added, -1 out of memory. */
struct pl_findings;
int pl_gpu_findings(const struct pl_gpu *g, double data_share, const char *path,
		    struct pl_findings *out);

#endif
