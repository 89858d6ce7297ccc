/*
 * The training step's time, exactly (stepclock.h).
 */
#include "stepclock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsio.h"
#include "stats.h"

/* Run by the measured Python at start-up. It must never change what the
 * program does: it only wraps step() (functools.wraps keeps torch's own
 * 'hooked' mark, so torch wraps it once), appends to a list, and writes
 * at exit in the process that stepped (a forked worker's copy writes
 * nothing). */
static const char sitecustomize[] =
    "# perfloop bench --metric steps: times each torch optimizer step.\n"
    "# Written by perfloop for one bench; chains to the sitecustomize it shadows.\n"
    "import os as _os, sys as _sys\n"
    "\n"
    "def _perfloop_step_clock():\n"
    "    out = _os.environ.get('PERFLOOP_STEP_CLOCK')\n"
    "    if not out:\n"
    "        return\n"
    "    import atexit, functools, time, importlib.abc\n"
    "    marks, pid = [], _os.getpid()\n"
    "\n"
    "    def save():\n"
    "        if _os.getpid() != pid or not marks:\n"
    "            return\n"
    "        try:\n"
    "            with open(out, 'a') as f:\n"
    "                f.write('%d %s\\n' % (pid, ' '.join('%d,%d' % m for m in marks)))\n"
    "        except OSError:\n"
    "            pass\n"
    "    atexit.register(save)\n"
    "\n"
    "    def patch(mod):\n"
    "        opt = getattr(mod, 'Optimizer', None)\n"
    "        if opt is None or opt.__dict__.get('_perfloop_clock'):\n"
    "            return\n"
    "        init = opt.__init__\n"
    "\n"
    "        @functools.wraps(init)\n"
    "        def __init__(self, *a, **k):\n"
    "            init(self, *a, **k)\n"
    "            cls = type(self)\n"
    "            step = cls.step\n"
    "            if getattr(step, '_perfloop_clock', False):\n"
    "                return\n"
    "\n"
    "            @functools.wraps(step)\n"
    "            def timed(*a, **k):\n"
    "                r = step(*a, **k)\n"
    "                marks.append((time.perf_counter_ns(), time.process_time_ns()))\n"
    "                return r\n"
    "            timed._perfloop_clock = True\n"
    "            cls.step = timed\n"
    "        opt.__init__ = __init__\n"
    "        opt._perfloop_clock = True\n"
    "\n"
    "    class Finder(importlib.abc.MetaPathFinder):\n"
    "        def find_spec(self, name, path, target=None):\n"
    "            if name != 'torch.optim.optimizer':\n"
    "                return None\n"
    "            for f in _sys.meta_path:\n"
    "                if f is self or not hasattr(f, 'find_spec'):\n"
    "                    continue\n"
    "                spec = f.find_spec(name, path, target)\n"
    "                if spec is not None:\n"
    "                    break\n"
    "            else:\n"
    "                return None\n"
    "            loader = spec.loader\n"
    "            if loader is None or not hasattr(loader, 'exec_module'):\n"
    "                return spec\n"
    "            run = loader.exec_module\n"
    "\n"
    "            def exec_module(module):\n"
    "                run(module)\n"
    "                patch(module)\n"
    "            loader.exec_module = exec_module\n"
    "            return spec\n"
    "    _sys.meta_path.insert(0, Finder())\n"
    "\n"
    "try:\n"
    "    _perfloop_step_clock()\n"
    "finally:\n"
    "    _here = _os.path.dirname(_os.path.abspath(__file__))\n"
    "    _sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or '.') != _here]\n"
    "    del _sys.modules['sitecustomize']\n"
    "    try:\n"
    "        import sitecustomize\n"
    "    except ImportError:\n"
    "        pass\n";

int pl_stepclock_open(struct pl_stepclock *c, struct pl_error *err)
{
	memset(c, 0, sizeof(*c));
	const char *tmp = getenv("TMPDIR");
	snprintf(c->dir, sizeof c->dir, "%s/perfloop-steps.XXXXXX",
		 tmp && *tmp && strlen(tmp) < 60 ? tmp : "/tmp");
	if (!mkdtemp(c->dir)) {
		int e = errno;
		c->dir[0] = '\0';
		return pl_error_set(err, PL_ESYS, "--metric steps: cannot make a folder: %s",
				    strerror(e));
	}
	char p[160];
	snprintf(p, sizeof p, "%s/py", c->dir);
	if (mkdir(p, 0700) != 0) {
		int e = errno;
		pl_stepclock_close(c);
		return pl_error_set(err, PL_ESYS, "--metric steps: cannot make '%s': %s", p,
				    strerror(e));
	}
	snprintf(p, sizeof p, "%s/py/sitecustomize.py", c->dir);
	int rc = pl_fsio_write_atomic(p, sitecustomize, sizeof sitecustomize - 1, err);
	if (rc != PL_OK)
		pl_stepclock_close(c);
	return rc;
}

int pl_stepclock_arm(const struct pl_stepclock *c, struct pl_stepclock_env *env)
{
	char clock[160], py[160];
	snprintf(clock, sizeof clock, "%s/clock", c->dir);
	snprintf(py, sizeof py, "%s/py", c->dir);
	unlink(clock);
	const char *old = getenv("PYTHONPATH");
	env->path = old ? strdup(old) : NULL;
	env->armed = 1;
	if (old && !env->path)
		return PL_ENOMEM;
	char *path = malloc(strlen(py) + (old ? strlen(old) : 0) + 2);
	if (!path)
		return PL_ENOMEM;
	sprintf(path, old && *old ? "%s:%s" : "%s", py, old ? old : "");
	int bad = setenv("PYTHONPATH", path, 1) != 0 || setenv("PERFLOOP_STEP_CLOCK", clock, 1) != 0;
	free(path);
	return bad ? PL_ENOMEM : PL_OK;
}

void pl_stepclock_disarm(struct pl_stepclock_env *env)
{
	if (!env->armed)
		return;
	if (env->path)
		setenv("PYTHONPATH", env->path, 1);
	else
		unsetenv("PYTHONPATH");
	unsetenv("PERFLOOP_STEP_CLOCK");
	free(env->path);
	env->path = NULL;
	env->armed = 0;
}

size_t pl_stepclock_intervals(const long long *t, size_t n, double *out)
{
	if (n < 2)
		return 0;
	size_t steps = n - 1, warm = steps < 6 ? 0 : steps < 20 ? 1 : 3, k = 0;
	for (size_t i = warm + 1; i < n; i++)
		out[k++] = (double)(t[i] - t[i - 1]) * 1e-6;
	return k;
}

/* Append the intervals of one process's marks to *all (grown as needed). */
static int add_intervals(const long long *t, size_t nt, double **all, size_t *nall, size_t *cap)
{
	if (*nall + nt > *cap) {
		size_t c = *nall + nt + 64;
		double *na = realloc(*all, c * sizeof(**all));
		if (!na)
			return 0;
		*all = na;
		*cap = c;
	}
	*nall += pl_stepclock_intervals(t, nt, *all + *nall);
	return 1;
}

int pl_stepclock_read(const struct pl_stepclock *c, int cpu, double *ms, double *cpu_ms,
		      size_t *count, char *why, size_t wlen)
{
	char clock[160];
	snprintf(clock, sizeof clock, "%s/clock", c->dir);
	size_t len = 0;
	int missing = 0;
	char *text = pl_fsio_read(clock, &len, &missing);
	if (!text) {
		snprintf(why, wlen,
			 "no optimizer step was timed in it (--metric steps times "
			 "torch.optim's step() in a Python that reads PYTHONPATH: not "
			 "under python -E or -I)");
		return 0;
	}
	/* both clocks' intervals: the wall clock's and the process's CPU time */
	double *wall = NULL, *proc = NULL;
	size_t nwall = 0, nproc = 0, wcap = 0, pcap = 0;
	long long *t = NULL, *u = NULL;
	size_t tcap = 0;
	int ok = 1;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && ok;
	     line = strtok_r(NULL, "\n", &save)) {
		size_t nt = 0;
		char *p = strchr(line, ' ');
		while (p && ok) {
			char *end, *end2;
			long long w = strtoll(p + 1, &end, 10);
			if (end == p + 1 || *end != ',')
				break;
			long long v = strtoll(end + 1, &end2, 10);
			if (end2 == end + 1)
				break;
			end = end2;
			if (nt == tcap) {
				tcap = tcap ? tcap * 2 : 256;
				long long *nt2 = realloc(t, tcap * sizeof(*t));
				long long *nu2 = nt2 ? realloc(u, tcap * sizeof(*u)) : NULL;
				ok = nt2 != NULL && nu2 != NULL;
				if (nt2)
					t = nt2;
				if (nu2)
					u = nu2;
			}
			if (ok) {
				t[nt] = w;
				u[nt++] = v;
			}
			p = *end == ' ' ? end : NULL;
		}
		if (ok)
			ok = add_intervals(t, nt, &wall, &nwall, &wcap) &&
			     add_intervals(u, nt, &proc, &nproc, &pcap);
	}
	free(text);
	free(t);
	free(u);
	if (!ok) {
		free(wall);
		free(proc);
		snprintf(why, wlen, "out of memory");
		return 0;
	}
	if (nwall == 0) {
		free(wall);
		free(proc);
		snprintf(why, wlen, "fewer than two optimizer steps were timed in it");
		return 0;
	}
	double wm = pl_stats_median_inplace(wall, nwall);
	double pm = pl_stats_median_inplace(proc, nproc);
	*ms = cpu ? pm : wm;
	*cpu_ms = pm;
	*count = nwall;
	free(wall);
	free(proc);
	return 1;
}

void pl_stepclock_close(struct pl_stepclock *c)
{
	if (!c->dir[0])
		return;
	char p[160];
	snprintf(p, sizeof p, "%s/py/sitecustomize.py", c->dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/py/__pycache__", c->dir);
	DIR *d = opendir(p); /* what the runs' Pythons cached of it */
	for (struct dirent *e; d && (e = readdir(d));) {
		char q[420];
		if (e->d_name[0] != '.' && snprintf(q, sizeof q, "%s/%s", p, e->d_name) < (int)sizeof q)
			unlink(q);
	}
	if (d)
		closedir(d);
	rmdir(p);
	snprintf(p, sizeof p, "%s/py", c->dir);
	rmdir(p);
	snprintf(p, sizeof p, "%s/clock", c->dir);
	unlink(p);
	rmdir(c->dir);
	c->dir[0] = '\0';
}
