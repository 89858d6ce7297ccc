/* A stand-in for NVML (libnvidia-ml.so.1) that answers the C API perfloop
 * uses with scripted values, for machines without a GPU. perfloop loads it
 * through PERFLOOP_NVML_LIB; FAKE_NVML scripts it, ';'-separated:
 *   devices=N         devices (default 1; 0: "sees no GPU")
 *   init=FAIL         nvmlInit_v2 fails (NVML_ERROR_DRIVER_NOT_LOADED)
 *   util=A,B,...      utilization.gpu of successive readings (cycled)
 *   mem=MiB total=MiB memory used and total
 *   clock=MHz power=W
 *   notsup=F,F        fields answered NVML_ERROR_NOT_SUPPORTED: util,
 *                     memory, clock, power, processes
 *   fail_after=K      after K utilization readings, every call fails with
 *                     NVML_ERROR_GPU_IS_LOST
 *   procmem=MiB       memory of the process FAKE_NVML_PID... any pid asked
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
	unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
} nvmlProcessInfo_t;

static int devices = 1, init_fail, fail_after = -1, calls;
static int utils[64], nutil;
static unsigned long long mem_mib = 1024, total_mib = 16384, proc_mib;
static unsigned clock_mhz = 1410, power_w = 250;
static char notsup[256];
static int loaded;

static void load(void)
{
	if (loaded)
		return;
	loaded = 1;
	const char *s = getenv("FAKE_NVML");
	if (!s)
		return;
	char *copy = strdup(s), *save = NULL;
	for (char *kv = strtok_r(copy, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
		char *v = strchr(kv, '=');
		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(kv, "devices"))
			devices = atoi(v);
		else if (!strcmp(kv, "init"))
			init_fail = !strcmp(v, "FAIL");
		else if (!strcmp(kv, "util")) {
			for (char *p = v; *p && nutil < 64;) {
				utils[nutil++] = atoi(p);
				p = strchr(p, ',');
				if (!p)
					break;
				p++;
			}
		} else if (!strcmp(kv, "mem"))
			mem_mib = strtoull(v, NULL, 10);
		else if (!strcmp(kv, "total"))
			total_mib = strtoull(v, NULL, 10);
		else if (!strcmp(kv, "clock"))
			clock_mhz = (unsigned)atoi(v);
		else if (!strcmp(kv, "power"))
			power_w = (unsigned)atoi(v);
		else if (!strcmp(kv, "notsup"))
			snprintf(notsup, sizeof notsup, ",%s,", v);
		else if (!strcmp(kv, "fail_after"))
			fail_after = atoi(v);
		else if (!strcmp(kv, "procmem"))
			proc_mib = strtoull(v, NULL, 10);
	}
	free(copy);
}

static int unsupported(const char *f)
{
	char k[64];
	snprintf(k, sizeof k, ",%s,", f);
	return strstr(notsup, k) != NULL;
}

static int lost(void)
{
	return fail_after >= 0 && calls > fail_after;
}

nvmlReturn_t nvmlInit_v2(void)
{
	load();
	return init_fail ? 9 : 0;
}

nvmlReturn_t nvmlShutdown(void)
{
	return 0;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case 3:
		return "Not Supported";
	case 9:
		return "Driver Not Loaded";
	case 15:
		return "GPU is lost";
	default:
		return "Unknown Error";
	}
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	*n = (unsigned)devices;
	return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	*d = (nvmlDevice_t)(unsigned long)(i + 1);
	return 0;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len)
{
	snprintf(name, len, "Stand-in GPU %lu", (unsigned long)d - 1);
	return 0;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	(void)d;
	calls++;
	if (lost())
		return 15;
	if (unsupported("util"))
		return 3;
	u->gpu = nutil ? (unsigned)utils[(calls - 1) % nutil] : 50;
	u->memory = u->gpu / 2;
	return 0;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	(void)d;
	if (lost())
		return 15;
	if (unsupported("memory"))
		return 3;
	m->total = total_mib << 20;
	m->used = mem_mib << 20;
	m->free = m->total - m->used;
	return 0;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz)
{
	(void)d;
	(void)type;
	if (lost())
		return 15;
	if (unsupported("clock"))
		return 3;
	*mhz = clock_mhz;
	return 0;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
	(void)d;
	if (lost())
		return 15;
	if (unsupported("power"))
		return 3;
	*mw = power_w * 1000;
	return 0;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *n,
						  nvmlProcessInfo_t *p)
{
	(void)d;
	if (lost())
		return 15;
	if (unsupported("processes"))
		return 3;
	const char *pid = getenv("FAKE_NVML_PID");
	if (!proc_mib) {
		*n = 0;
		return 0;
	}
	p[0].pid = pid ? (unsigned)atoi(pid) : 0;
	p[0].usedGpuMemory = proc_mib << 20;
	*n = 1;
	return 0;
}
