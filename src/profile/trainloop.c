/*
 * Training loops from stacks (see trainloop.h).
 *
 * The phases are named by PyTorch's own Python frames, which every
 * training loop passes through whatever the user's code looks like:
 * `_BaseDataLoaderIter.__next__` (torch/utils/data/dataloader.py) while a
 * batch is fetched (num_workers=0: the Dataset's __getitem__ runs below
 * it; workers: the wait on their queue), `Module._call_impl` for forward,
 * `Tensor.backward` / `torch.autograd.backward` for backward, and an
 * optimizer's `step` (torch/optim/) or `zero_grad` for the update.
 *
 * Steps: a step begins where the thread starts waiting for a batch after it
 * has run a forward, a backward or an optimizer step since the last one
 * began; its time
 * runs to the next step's beginning, so what the loop does between
 * (logging, the loss, a scheduler) counts in the step, as a script's own
 * `step_time` counts it. The last, unfinished step is left out.
 *
 * With DataLoader workers the fetch is a queue's get, well under a
 * sample's millisecond, and most steps had no sample of it: 43 of 60 steps
 * were found, two merged into one inflating every per-step figure. So the
 * loop's own structure marks a step too (pl_train_add_at): the optimizer's
 * step ends one, so a forward or backward after it begins the next; and
 * the loop's frame (the caller of __next__), seen at or past the line of
 * the update (its logging, its timers) and then back above it, has gone
 * round; and a zero_grad above the loop's first forward (and above the
 * update) after the step computed is the next step's first call. A step
 * begun so has no data time: its fetch took less than a sample.
 */
#include "trainloop.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* the file is PyTorch's: ".../torch/<rest>" */
static int torch_file(const char *file, const char *rest)
{
	const char *p = strstr(file, "torch/");
	while (p) {
		if ((p == file || p[-1] == '/') && strncmp(p + 6, rest, strlen(rest)) == 0)
			return 1;
		p = strstr(p + 1, "torch/");
	}
	return 0;
}

enum pl_train_phase pl_train_frame_phase(const char *name, const char *file)
{
	if (!name || !file)
		return PL_TRAIN_OTHER;
	if (torch_file(file, "utils/data/dataloader.py") && ends_with(name, "__next__"))
		return PL_TRAIN_DATA;
	if (torch_file(file, "nn/modules/module.py") &&
	    (ends_with(name, "_call_impl") || ends_with(name, "_wrapped_call_impl")))
		return PL_TRAIN_FORWARD;
	if ((torch_file(file, "_tensor.py") && ends_with(name, "backward")) ||
	    (torch_file(file, "autograd/__init__.py") && strcmp(name, "backward") == 0))
		return PL_TRAIN_BACKWARD;
	if (ends_with(name, "zero_grad") &&
	    (torch_file(file, "optim/") || torch_file(file, "nn/modules/module.py")))
		return PL_TRAIN_OPTIM;
	if (torch_file(file, "optim/") && (ends_with(name, ".step") || strcmp(name, "step") == 0 ||
					   ends_with(name, "step.<locals>.wrapper") ||
					   ends_with(name, "profile_hook_step.<locals>.wrapper")))
		return PL_TRAIN_OPTIM;
	return PL_TRAIN_OTHER;
}

int pl_train_frame_worker(const char *name, const char *file)
{
	if (!name || !file)
		return 0;
	if (torch_file(file, "utils/data/_utils/worker.py") && !strcmp(name, "_worker_loop"))
		return PL_TRAIN_WORKER_LOOP;
	if (torch_file(file, "utils/data/_utils/fetch.py") && ends_with(name, "fetch"))
		return PL_TRAIN_WORKER_FETCH;
	return 0;
}

int pl_train_frame_loader(const char *name, const char *file)
{
	if (!name || !file || !torch_file(file, "utils/data/dataloader.py"))
		return 0;
	if (!strncmp(name, "_SingleProcessDataLoaderIter.", 29))
		return PL_TRAIN_LOADER_SINGLE;
	if (!strncmp(name, "_MultiProcessingDataLoaderIter.", 31))
		return PL_TRAIN_LOADER_WORKERS;
	return 0;
}

int pl_train_frame_update(const char *name, const char *file)
{
	return name && file && pl_train_frame_phase(name, file) == PL_TRAIN_OPTIM &&
	       !ends_with(name, "zero_grad");
}

enum pl_train_phase pl_train_classify(const char *const *names, const char *const *files,
				      size_t depth)
{
	for (size_t i = 0; i < depth; i++) {
		enum pl_train_phase p = pl_train_frame_phase(names[i], files[i]);
		if (p != PL_TRAIN_OTHER)
			return p;
	}
	return PL_TRAIN_OTHER;
}

static struct pl_train_thread *thread(struct pl_train *t, pid_t pid, unsigned long tid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->th[i].pid == pid && t->th[i].tid == tid)
			return &t->th[i];
	if (pl_grow((void **)&t->th, &t->cap, t->n + 1, sizeof(*t->th), 8) < 0)
		return NULL;
	struct pl_train_thread *x = &t->th[t->n++];
	memset(x, 0, sizeof(*x));
	x->pid = pid;
	x->tid = tid;
	return x;
}

static int end_step(struct pl_train_thread *x)
{
	size_t c1 = x->cap, c2 = x->cap;
	if (pl_grow((void **)&x->data, &c1, x->nsteps + 1, sizeof(*x->data), 64) < 0 ||
	    pl_grow((void **)&x->total, &c2, x->nsteps + 1, sizeof(*x->total), 64) < 0)
		return -1;
	x->cap = c1 < c2 ? c1 : c2;
	x->data[x->nsteps] = x->step_data;
	x->total[x->nsteps] = x->step_total;
	x->nsteps++;
	return 0;
}

static int begin_step(struct pl_train_thread *x)
{
	if (x->in_step && end_step(x) < 0)
		return -1;
	x->in_step = 1;
	x->computed = x->updated = x->past_update = 0;
	x->step_data = x->step_total = 0;
	return 0;
}

int pl_train_add_at(struct pl_train *t, pid_t pid, unsigned long tid, enum pl_train_phase ph,
		    struct pl_train_where where, double dt)
{
	if (where.worker & PL_TRAIN_WORKER_LOOP) {
		size_t i = 0;
		while (i < t->nworkers && t->workers[i] != pid)
			i++;
		if (i == t->nworkers) {
			if (pl_grow((void **)&t->workers, &t->capworkers, t->nworkers + 1,
				    sizeof(*t->workers), 8) < 0)
				return -1;
			size_t cs = t->capworker_s;
			if (pl_grow((void **)&t->worker_seen_s, &cs, t->nworkers + 1,
				    sizeof(*t->worker_seen_s), 8) < 0 ||
			    pl_grow((void **)&t->worker_busy_s, &t->capworker_s, t->nworkers + 1,
				    sizeof(*t->worker_busy_s), 8) < 0)
				return -1;
			t->worker_seen_s[t->nworkers] = t->worker_busy_s[t->nworkers] = 0;
			t->workers[t->nworkers++] = pid;
		}
		t->worker_seen_s[i] += dt;
		if (where.worker & PL_TRAIN_WORKER_FETCH) {
			t->worker_load_s += dt;
			t->worker_busy_s[i] += dt;
		}
		return 0; /* a worker is not the loop */
	}
	struct pl_train_thread *x = thread(t, pid, tid);
	if (!x)
		return -1;
	if ((int)ph < 0 || ph >= PL_TRAIN_NPHASES)
		ph = PL_TRAIN_OTHER;
	if (ph == PL_TRAIN_DATA)
		t->loader |= where.loader;
	int update = ph == PL_TRAIN_OPTIM && where.update;
	if (update && where.line > 0)
		x->update_line = where.line;
	x->t[ph] += dt;
	int begins = 0;
	if (ph == PL_TRAIN_DATA)
		begins = !x->in_step || x->computed;
	else if (x->in_step && x->updated &&
		 (ph == PL_TRAIN_FORWARD || ph == PL_TRAIN_BACKWARD))
		begins = 1; /* the next step's fetch took less than a sample */
	else if (x->in_step && x->past_update && where.line > 0 && x->update_line > 0 &&
		 where.line < x->update_line)
		begins = 1; /* the loop's frame went round, its fetch unseen */
	else if (x->in_step && x->computed && ph == PL_TRAIN_OPTIM && !update &&
		 where.line > 0 && x->forward_line > 0 && x->update_line > 0 &&
		 where.line < x->forward_line && where.line < x->update_line)
		begins = 1; /* a zero_grad at the top of the loop, before its forward */
	if (ph == PL_TRAIN_FORWARD && where.line > 0 &&
	    (x->forward_line == 0 || where.line < x->forward_line))
		x->forward_line = where.line;
	if (begins && begin_step(x) < 0)
		return -1;
	if (!x->in_step)
		return 0;
	x->step_total += dt;
	if (ph == PL_TRAIN_DATA)
		x->step_data += dt;
	if (ph == PL_TRAIN_FORWARD || ph == PL_TRAIN_BACKWARD || ph == PL_TRAIN_OPTIM)
		x->computed = 1;
	if (update)
		x->updated = 1;
	if (x->computed && where.line > 0 && x->update_line > 0 && where.line >= x->update_line)
		x->past_update = 1;
	return 0;
}

int pl_train_add(struct pl_train *t, pid_t pid, unsigned long tid, enum pl_train_phase ph,
		 double dt)
{
	return pl_train_add_at(t, pid, tid, ph, (struct pl_train_where){0, 0, 0, 0}, dt);
}

const struct pl_train_thread *pl_train_loop_thread(const struct pl_train *t)
{
	const struct pl_train_thread *best = NULL;
	double most = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct pl_train_thread *x = &t->th[i];
		double comp = x->t[PL_TRAIN_FORWARD] + x->t[PL_TRAIN_BACKWARD] + x->t[PL_TRAIN_OPTIM];
		if (x->t[PL_TRAIN_DATA] <= 0 ||
		    x->t[PL_TRAIN_BACKWARD] + x->t[PL_TRAIN_OPTIM] <= 0 || x->nsteps == 0)
			continue;
		if (x->t[PL_TRAIN_DATA] + comp > most) {
			most = x->t[PL_TRAIN_DATA] + comp;
			best = x;
		}
	}
	return best;
}

void pl_train_release(struct pl_train *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->th[i].data);
		free(t->th[i].total);
	}
	free(t->th);
	free(t->workers);
	free(t->worker_seen_s);
	free(t->worker_busy_s);
	memset(t, 0, sizeof(*t));
}
