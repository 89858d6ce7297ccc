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
	double step_data, step_total;
	double *data, *total; /* per finished step */
	size_t nsteps, cap;
};

struct pl_train {
	struct pl_train_thread *th;
	size_t n, cap;
};

/* One sample of a thread, standing for dt seconds of it. 0 or -1 (out of
 * memory). */
int pl_train_add(struct pl_train *t, pid_t pid, unsigned long tid, enum pl_train_phase ph,
		 double dt);

/* The thread that runs the loop: the one with the most data and compute
 * time that has both; NULL when no sample looked like training. */
const struct pl_train_thread *pl_train_loop_thread(const struct pl_train *t);

void pl_train_release(struct pl_train *t);

#endif
