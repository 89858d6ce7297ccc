/*
 * One instance per rank under the launchers people already use (mpirun,
 * srun, torchrun): which rank this process is, read from the environment
 * the launcher sets, and output names made per rank (%r, %l, %h, %p).
 *
 * The variables are read in this order, the first rank found winning:
 *   OMPI_COMM_WORLD_RANK / _LOCAL_RANK / _SIZE   Open MPI's mpirun  "openmpi"
 *   PMI_RANK / MPI_LOCALRANKID / PMI_SIZE        MPICH, Intel MPI   "pmi"
 *   SLURM_PROCID / SLURM_LOCALID / SLURM_NTASKS  Slurm's srun       "slurm"
 *   RANK / LOCAL_RANK / WORLD_SIZE               torchrun           "torchrun"
 * With none of them: rank 0 of 1, launcher "none".
 */
#ifndef PL_RANKS_H
#define PL_RANKS_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"

struct pl_rank {
	long rank, local_rank, world_size; /* -1: the launcher did not say */
	char host[256];
	const char *launcher;
};

void pl_rank_detect(struct pl_rank *r);

/* in with %r (rank), %l (local rank), %h (host), %p (this process's id)
 * and %% expanded; any other % stays as it is. PL_EINPUT (naming the
 * option) when the result does not fit in len. */
int pl_rank_expand(const char *option, const char *in, const struct pl_rank *r, char *out,
		   size_t len, struct pl_error *err);

/* Whether an output name would be one file for several ranks: under a
 * launcher of more than one rank (or one that does not say how many), a
 * name without %r or %p, and not both %h and %l. Two ranks writing one
 * file leave the last one's, silently. */
int pl_rank_shared_name(const char *name, const struct pl_rank *r);

/* Whether rank is in list ("0,3", ranges "0-3", both: "0,4-7"): 1 or 0;
 * PL_EINPUT naming option where list is not such a list. */
int pl_rank_in(const char *option, const char *list, long rank, struct pl_error *err);

/* {rank, local_rank, world_size, host, launcher} (null where unknown) */
json_t *pl_rank_json(const struct pl_rank *r);

#endif
