/*
 * The GPU sampler. NVML is loaded with dlopen("libnvidia-ml.so.1") when
 * asked for, so that perfloop builds and runs without the CUDA toolkit or a
 * driver; only the handful of functions below are looked up, with their C
 * types written out here (they are the driver's stable ABI: the `_v2`
 * names where NVML versioned them). A thread of its own reads every device
 * at the asked rate (10 Hz by default: NVML's utilization is itself an
 * average over 1/6 s to 1 s), so that the measured program's timing never
 * waits on the driver. A field a device does not give
 * (NVML_ERROR_NOT_SUPPORTED) is left out of that device's numbers; any
 * other error stops that device's sampling and is reported with the
 * samples taken until then. The tests use a stand-in library with scripted
 * answers (tests/cli/fake_nvml.c), selected by PERFLOOP_NVML_LIB.
 */
#include "gpu.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "findings.h"
#include "grow.h"
#include "monotime.h"
#include "stats.h"

/* NVML's types, as its header declares them */
typedef int nvml_return;
typedef void *nvml_device;
struct nvml_memory {
	unsigned long long total, free, used;
};
struct nvml_utilization {
	unsigned int gpu, memory;
};
struct nvml_process_v1 {
	unsigned int pid;
	unsigned long long used_gpu_memory;
};
#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_CLOCK_SM 1
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

struct pl_gpu_api {
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	const char *(*error_string)(nvml_return);
	nvml_return (*count)(unsigned int *);
	nvml_return (*handle)(unsigned int, nvml_device *);
	nvml_return (*name)(nvml_device, char *, unsigned int);
	nvml_return (*utilization)(nvml_device, struct nvml_utilization *);
	nvml_return (*memory)(nvml_device, struct nvml_memory *);
	nvml_return (*clock)(nvml_device, int, unsigned int *);
	nvml_return (*power)(nvml_device, unsigned int *);
	nvml_return (*processes)(nvml_device, unsigned int *, struct nvml_process_v1 *);
	nvml_device h[16];
};

static const char *errstr(const struct pl_gpu_api *a, nvml_return r)
{
	const char *s = a->error_string ? a->error_string(r) : NULL;
	return s ? s : "unknown error";
}

/* A field: its value, "not supported" (-1 kept), or an error that stops
 * the device. */
static int field(const struct pl_gpu_api *a, struct pl_gpu_device *d, const char *what,
		 nvml_return r)
{
	if (r == NVML_SUCCESS)
		return 1;
	if (r == NVML_ERROR_NOT_SUPPORTED)
		return 0;
	snprintf(d->error, sizeof d->error, "%s: %s (error %d)", what, errstr(a, r), r);
	return -1;
}

static int read_device(struct pl_gpu *g, unsigned i, double t)
{
	struct pl_gpu_api *a = g->api;
	struct pl_gpu_device *d = &g->dev[i];
	struct pl_gpu_sample s = {.t = t,
				  .util = -1,
				  .mem_util = -1,
				  .mem_used = -1,
				  .mem_total = -1,
				  .sm_mhz = -1,
				  .power_w = -1,
				  .proc_mem = -1};
	struct nvml_utilization u;
	int k = field(a, d, "utilization", a->utilization(a->h[i], &u));
	if (k < 0)
		return -1;
	if (k) {
		s.util = (int)u.gpu;
		s.mem_util = (int)u.memory;
	}
	struct nvml_memory m;
	if ((k = field(a, d, "memory", a->memory(a->h[i], &m))) < 0)
		return -1;
	if (k) {
		s.mem_used = (long long)m.used;
		s.mem_total = (long long)m.total;
	}
	unsigned int v;
	if (a->clock) {
		if ((k = field(a, d, "SM clock", a->clock(a->h[i], NVML_CLOCK_SM, &v))) < 0)
			return -1;
		if (k)
			s.sm_mhz = (int)v;
	}
	if (a->power) {
		if ((k = field(a, d, "power", a->power(a->h[i], &v))) < 0)
			return -1;
		if (k)
			s.power_w = v / 1000.0;
	}
	pid_t pid = g->pid;
	if (a->processes && pid > 0) {
		struct nvml_process_v1 p[64];
		unsigned int n = 64;
		nvml_return r = a->processes(a->h[i], &n, p);
		if (r == NVML_SUCCESS) {
			s.proc_mem = 0;
			for (unsigned j = 0; j < n && j < 64; j++)
				if ((pid_t)p[j].pid == pid &&
				    p[j].used_gpu_memory != NVML_VALUE_NOT_AVAILABLE)
					s.proc_mem += (long long)p[j].used_gpu_memory;
		} else if (r != NVML_ERROR_NOT_SUPPORTED && r != NVML_ERROR_INSUFFICIENT_SIZE &&
			   field(a, d, "processes", r) < 0) {
			return -1;
		}
	}
	pthread_mutex_lock(&g->mu);
	int rc = pl_grow((void **)&d->s, &d->cap, d->n + 1, sizeof(*d->s), 256);
	if (rc == 0)
		d->s[d->n++] = s;
	pthread_mutex_unlock(&g->mu);
	return rc;
}

static void *sampler(void *arg)
{
	struct pl_gpu *g = arg;
	double period = 1.0 / g->hz, next = pl_now_s();
	for (;;) {
		pthread_mutex_lock(&g->mu);
		int stop = g->stop;
		pthread_mutex_unlock(&g->mu);
		if (stop)
			break;
		double t = pl_now_s();
		for (unsigned i = 0; i < g->ndev; i++)
			if (!g->dev[i].error[0] && read_device(g, i, t - g->t0) < 0 &&
			    !g->dev[i].error[0])
				snprintf(g->dev[i].error, sizeof g->dev[i].error, "out of memory");
		next += period;
		double wait = next - pl_now_s();
		if (wait < 0) {
			next = pl_now_s();
			continue;
		}
		struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
	return NULL;
}

#define SYM(field, name) *(void **)(&a->field) = dlsym(g->lib, name)

int pl_gpu_start(struct pl_gpu *g, double hz)
{
	memset(g, 0, sizeof(*g));
	g->hz = hz > 0 ? hz : 10;
	const char *path = getenv("PERFLOOP_NVML_LIB");
	if (!path || !*path)
		path = "libnvidia-ml.so.1";
	g->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!g->lib) {
		snprintf(g->status, sizeof g->status,
			 "no GPU section: NVML (%s) could not be loaded: no NVIDIA driver here",
			 path);
		return PL_ENOTSUP;
	}
	struct pl_gpu_api *a = calloc(1, sizeof(*a));
	if (!a) {
		dlclose(g->lib);
		g->lib = NULL;
		return PL_ENOMEM;
	}
	g->api = a;
	SYM(init, "nvmlInit_v2");
	SYM(shutdown, "nvmlShutdown");
	SYM(error_string, "nvmlErrorString");
	SYM(count, "nvmlDeviceGetCount_v2");
	SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
	SYM(name, "nvmlDeviceGetName");
	SYM(utilization, "nvmlDeviceGetUtilizationRates");
	SYM(memory, "nvmlDeviceGetMemoryInfo");
	SYM(clock, "nvmlDeviceGetClockInfo");
	SYM(power, "nvmlDeviceGetPowerUsage");
	SYM(processes, "nvmlDeviceGetComputeRunningProcesses");
	const char *why = NULL;
	nvml_return r = 0;
	unsigned int n = 0;
	int inited = 0;
	if (!a->init || !a->shutdown || !a->count || !a->handle || !a->utilization ||
	    !a->memory)
		why = "is missing functions perfloop needs";
	else if ((r = a->init()) != NVML_SUCCESS)
		why = "could not start";
	else if ((inited = 1, r = a->count(&n)) != NVML_SUCCESS)
		why = "could not count the devices";
	else if (n == 0)
		why = "sees no GPU";
	if (why) {
		if (r)
			snprintf(g->status, sizeof g->status, "no GPU section: NVML (%s) %s: %s",
				 path, why, errstr(a, r));
		else
			snprintf(g->status, sizeof g->status, "no GPU section: NVML (%s) %s", path,
				 why);
		if (inited)
			a->shutdown();
		pl_gpu_release(g);
		return PL_ENOTSUP;
	}
	if (n > 16)
		n = 16;
	g->dev = calloc(n, sizeof(*g->dev));
	if (!g->dev) {
		a->shutdown();
		pl_gpu_release(g);
		return PL_ENOMEM;
	}
	for (unsigned i = 0; i < n; i++) {
		if ((r = a->handle(i, &a->h[i])) != NVML_SUCCESS) {
			snprintf(g->dev[i].error, sizeof g->dev[i].error, "no handle: %s",
				 errstr(a, r));
			continue;
		}
		if (!a->name || a->name(a->h[i], g->dev[i].name, sizeof g->dev[i].name) != 0)
			snprintf(g->dev[i].name, sizeof g->dev[i].name, "GPU %u", i);
	}
	g->ndev = n;
	pthread_mutex_init(&g->mu, NULL);
	g->t0 = pl_now_s();
	if (pthread_create(&g->th, NULL, sampler, g) != 0) {
		snprintf(g->status, sizeof g->status, "no GPU section: no sampling thread");
		a->shutdown();
		pthread_mutex_destroy(&g->mu);
		pl_gpu_release(g);
		return PL_ENOTSUP;
	}
	g->started = 1;
	return PL_OK;
}

void pl_gpu_set_pid(struct pl_gpu *g, pid_t pid)
{
	g->pid = pid;
}

void pl_gpu_stop(struct pl_gpu *g)
{
	if (!g->started)
		return;
	pthread_mutex_lock(&g->mu);
	g->stop = 1;
	pthread_mutex_unlock(&g->mu);
	pthread_join(g->th, NULL);
	pthread_mutex_destroy(&g->mu);
	g->started = 0;
	g->api->shutdown();
	dlclose(g->lib);
	g->lib = NULL;
}

void pl_gpu_release(struct pl_gpu *g)
{
	pl_gpu_stop(g);
	if (g->lib)
		dlclose(g->lib);
	g->lib = NULL;
	for (unsigned i = 0; i < g->ndev; i++)
		free(g->dev[i].s);
	free(g->dev);
	free(g->api);
	g->dev = NULL;
	g->api = NULL;
	g->ndev = 0;
}

/* The statistics of one field (0 utilization, 1 SM clock, 2 power) over
 * the readings that gave it; 0 when none did. x holds d->n values. */
static int describe(const struct pl_gpu_device *d, int which, double *x, struct pl_describe *s)
{
	size_t k = 0;
	for (size_t i = 0; i < d->n; i++) {
		double v = which == 0 ? d->s[i].util : which == 1 ? d->s[i].sm_mhz : d->s[i].power_w;
		if (v >= 0)
			x[k++] = v;
	}
	return k && pl_stats_describe(x, k, s) == PL_OK;
}

void pl_gpu_device_stats(const struct pl_gpu_device *d, struct pl_gpu_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->n = d->n;
	out->util_mean = out->util_p50 = out->util_min = -1;
	out->mem_peak = out->mem_total = out->proc_mem_peak = -1;
	out->sm_mhz_p50 = out->power_mean_w = -1;
	double *x = malloc((d->n + 1) * sizeof(*x));
	if (!x)
		return;
	struct pl_describe s;
	if (describe(d, 0, x, &s)) {
		out->util_mean = s.mean;
		out->util_p50 = s.p50;
		out->util_min = s.min;
	}
	if (describe(d, 1, x, &s))
		out->sm_mhz_p50 = s.p50;
	if (describe(d, 2, x, &s))
		out->power_mean_w = s.mean;
	free(x);
	for (size_t i = 0; i < d->n; i++) {
		if (d->s[i].mem_used > out->mem_peak)
			out->mem_peak = d->s[i].mem_used;
		if (d->s[i].mem_total > out->mem_total)
			out->mem_total = d->s[i].mem_total;
		if (d->s[i].proc_mem > out->proc_mem_peak)
			out->proc_mem_peak = d->s[i].proc_mem;
	}
}

static json_t *num_or_null(double v)
{
	return v >= 0 ? json_real(v) : json_null();
}

static json_t *int_or_null(long long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

json_t *pl_gpu_to_json(const struct pl_gpu *g)
{
	json_t *o = json_object();
	json_object_set_new(o, "available", json_boolean(g->ndev > 0));
	if (g->ndev == 0) {
		json_object_set_new(o, "status", json_string(g->status));
		return o;
	}
	json_object_set_new(o, "hz", json_real(g->hz));
	json_t *devs = json_array();
	for (unsigned i = 0; i < g->ndev; i++) {
		const struct pl_gpu_device *d = &g->dev[i];
		struct pl_gpu_stats st;
		pl_gpu_device_stats(d, &st);
		json_t *t = json_array(), *u = json_array(), *m = json_array();
		for (size_t j = 0; j < d->n; j++) {
			json_array_append_new(t, json_real(d->s[j].t));
			json_array_append_new(u, d->s[j].util >= 0 ? json_integer(d->s[j].util)
								   : json_null());
			json_array_append_new(m, int_or_null(d->s[j].mem_used));
		}
		json_array_append_new(
		    devs,
		    json_pack("{s:s, s:I, s:{s:o, s:o, s:o}, s:{s:o, s:o, s:o}, s:o, s:o, s:o, "
			      "s:{s:o, s:o, s:o}}",
			      "name", d->name, "samples", (json_int_t)d->n, "util", "mean",
			      num_or_null(st.util_mean), "p50", num_or_null(st.util_p50), "min",
			      num_or_null(st.util_min), "memory", "peak_bytes",
			      int_or_null(st.mem_peak), "total_bytes", int_or_null(st.mem_total),
			      "process_peak_bytes", int_or_null(st.proc_mem_peak),
			      "sm_clock_mhz_p50", num_or_null(st.sm_mhz_p50), "power_w_mean",
			      num_or_null(st.power_mean_w), "error",
			      d->error[0] ? json_string(d->error) : json_null(), "series", "t", t,
			      "util", u, "mem_used_bytes", m));
	}
	json_object_set_new(o, "devices", devs);
	return o;
}

void pl_gpu_print(FILE *f, const struct pl_gpu *g)
{
	if (g->ndev == 0) {
		fprintf(f, "%s\n", g->status);
		return;
	}
	for (unsigned i = 0; i < g->ndev; i++) {
		const struct pl_gpu_device *d = &g->dev[i];
		struct pl_gpu_stats st;
		pl_gpu_device_stats(d, &st);
		fprintf(f, "GPU %u (%s), %zu samples at %.0f Hz:", i, d->name, d->n, g->hz);
		if (st.util_mean >= 0)
			fprintf(f, " utilization mean %.0f%%, p50 %.0f%%, min %.0f%%;", st.util_mean,
				st.util_p50, st.util_min);
		else
			fprintf(f, " utilization not given by the driver;");
		if (st.mem_peak >= 0)
			fprintf(f, " memory peak %.1f of %.1f GiB", st.mem_peak / 1073741824.0,
				st.mem_total / 1073741824.0);
		if (st.proc_mem_peak >= 0)
			fprintf(f, " (the program: %.1f GiB)", st.proc_mem_peak / 1073741824.0);
		if (st.sm_mhz_p50 >= 0)
			fprintf(f, "; SM clock %.0f MHz", st.sm_mhz_p50);
		if (st.power_mean_w >= 0)
			fprintf(f, "; power %.0f W", st.power_mean_w);
		fprintf(f, "\n");
		if (d->error[0])
			fprintf(f, "  sampling stopped after %zu samples: %s\n", d->n, d->error);
	}
}

double pl_gpu_util_mean(const struct pl_gpu *g)
{
	double best = -1;
	for (unsigned i = 0; i < g->ndev; i++) {
		struct pl_gpu_stats st;
		pl_gpu_device_stats(&g->dev[i], &st);
		if (st.util_mean > best)
			best = st.util_mean;
	}
	return best;
}

int pl_gpu_findings(const struct pl_gpu *g, double data_share, const char *path,
		    struct pl_findings *out)
{
	double util = pl_gpu_util_mean(g);
	if (!(util >= 0 && util < 50 && data_share > 0.3))
		return 0;
	char sig[160], ev[320];
	snprintf(sig, sizeof sig, "the GPU is busy %.0f%% of the time while the step waits for data",
		 util);
	snprintf(ev, sizeof ev,
		 "NVML: mean GPU utilization %.0f%% over the run (busiest device); the training "
		 "step waits for its batch %.0f%% of its time",
		 util, 100 * data_share);
	struct pl_finding *x = pl_findings_add_measured(
	    out, "gpu.underutilized", path, "gpu-underutilized", sig, ev,
	    "the GPU waits for the input pipeline: fix the data loading first "
	    "(ml.data-loading-bound: num_workers, pin_memory, prefetch_factor); faster kernels "
	    "would only make it wait longer",
	    "gpu_utilization", "percent", util);
	if (!x)
		return -1;
	x->severity = util < 25 ? PL_SEV_HIGH : PL_SEV_MEDIUM;
	x->ratio = util > 1 ? 100.0 / util : 100.0;
	x->has_ratio = 1;
	x->evidence_numbers = json_pack("{s:f, s:f, s:f}", "gpu_utilization", util, "data_share",
					data_share, "ratio", x->ratio);
	x->confidence = 0.8;
	x->level = 3;
	return 1;
}
