/*
 * A PyTorch training loop seen through its Python stacks (`perfloop
 * profile`): each sample of a thread is classified by the frames on its
 * stack (waiting for or loading a batch, computing, other), over wall-clock
 * time, and the loop thread's samples are cut into steps, so that the data
 * vs compute split of `perfloop steps` comes without a line of the user's
 * code changed.
 */
#ifndef PL_TRAINLOOP_H
#define PL_TRAINLOOP_H

#include <stddef.h>
#include <sys/types.h>

enum pl_train_phase {
	PL_TRAIN_OTHER,
	PL_TRAIN_DATA,	   /* inside a DataLoader iterator's __next__ */
	PL_TRAIN_FORWARD,  /* inside an nn.Module call */
	PL_TRAIN_BACKWARD, /* inside Tensor.backward / autograd.backward */
	PL_TRAIN_OPTIM,	   /* inside an optimizer's step or a zero_grad */
	PL_TRAIN_NPHASES
};

/* The phase one frame names (PL_TRAIN_OTHER for most). */
enum pl_train_phase pl_train_frame_phase(const char *name, const char *file);

/* 1 where the frame is an optimizer's step (the update that ends a
 * training step), not a zero_grad. */
int pl_train_frame_update(const char *name, const char *file);

/* The phase of a stack given root first: the outermost frame that names
 * one decides (a forward called while loading a batch is loading). */
enum pl_train_phase pl_train_classify(const char *const *names, const char *const *files,
				      size_t depth);

struct pl_train_thread {
	pid_t pid;
	unsigned long tid;
	double t[PL_TRAIN_NPHASES]; /* seconds in each phase */
	/* the step being measured: from a batch's wait to the next one */
	int in_step, computed;
	int updated;	 /* an optimizer step was seen in it */
	int past_update; /* the loop's frame was seen at or after the update's line */
	int update_line; /* the loop frame's line of the update (0: not seen yet) */
	int forward_line; /* ... the first line a forward was seen at (0: none) */
	double step_data, step_total;
	double *data, *total; /* per finished step */
	size_t nsteps, cap;
};

struct pl_train {
	struct pl_train_thread *th;
	size_t n, cap;
	/* DataLoader worker processes (their _worker_loop seen) and the time
	 * they spent loading batches (inside the fetcher), waits included */
	pid_t *workers;
	size_t nworkers, capworkers;
	double worker_load_s;
	/* per worker: the time seen (its _worker_loop sampled, waits
	 * included) and the part of it loading a batch */
	double *worker_seen_s, *worker_busy_s;
	size_t capworker_s;
	int loader; /* PL_TRAIN_LOADER_* bits seen in the loop's fetches */
};

/* What a frame says of a DataLoader worker: PL_TRAIN_WORKER_LOOP for its
 * _worker_loop, PL_TRAIN_WORKER_FETCH for the fetcher that loads a batch
 * (the Dataset's __getitem__ and the collate below it), 0 otherwise. */
#define PL_TRAIN_WORKER_LOOP 1
#define PL_TRAIN_WORKER_FETCH 2
int pl_train_frame_worker(const char *name, const char *file);

/* Which DataLoader iterator a frame is of: PL_TRAIN_LOADER_SINGLE (the
 * main process loads), PL_TRAIN_LOADER_WORKERS (worker processes load),
 * 0 neither. */
#define PL_TRAIN_LOADER_SINGLE 1
#define PL_TRAIN_LOADER_WORKERS 2
int pl_train_frame_loader(const char *name, const char *file);

/* One sample of a thread, standing for dt seconds of it. 0 or -1 (out of
 * memory). */
int pl_train_add(struct pl_train *t, pid_t pid, unsigned long tid, enum pl_train_phase ph,
		 double dt);

/* Where in the loop a sample is, beyond its phase: whether its outermost
 * phase frame is the optimizer's step, and the line the loop's own frame
 * (the caller of the DataLoader's __next__) is at, 0 where it is not on
 * the stack or not known yet. */
struct pl_train_where {
	int update;
	int line;
	int worker; /* PL_TRAIN_WORKER_* bits of the stack's frames */
	int loader; /* PL_TRAIN_LOADER_* bits of the stack's frames */
};

/* pl_train_add with the loop's structure: a step also begins, where the
 * batch's fetch was too short to be sampled, at a forward or backward
 * after the optimizer's step, or where the loop's frame comes back above
 * the update's line after it was at or past it. */
int pl_train_add_at(struct pl_train *t, pid_t pid, unsigned long tid, enum pl_train_phase ph,
		    struct pl_train_where where, double dt);

/* The thread that runs the loop: the one with the most data and compute
 * time that has both; NULL when no sample looked like training. */
const struct pl_train_thread *pl_train_loop_thread(const struct pl_train *t);

void pl_train_release(struct pl_train *t);

#endif
