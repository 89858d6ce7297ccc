/*
 * Ranks under a launcher (ranks.h).
 */
#include "ranks.h"

#include <errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* a non-negative integer from the environment, or -1 */
static long env_long(const char *name)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return -1;
	char *end;
	long x = strtol(v, &end, 10);
	return *end || x < 0 ? -1 : x;
}

void pl_rank_detect(struct pl_rank *r)
{
	static const struct {
		const char *rank, *local, *size, *launcher;
	} known[] = {
	    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE", "openmpi"},
	    {"PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "pmi"},
	    {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "slurm"},
	    {"RANK", "LOCAL_RANK", "WORLD_SIZE", "torchrun"},
	};
	memset(r, 0, sizeof(*r));
	r->rank = 0;
	r->local_rank = 0;
	r->world_size = 1;
	r->launcher = "none";
	for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
		long rank = env_long(known[i].rank);
		if (rank < 0)
			continue;
		r->rank = rank;
		r->local_rank = env_long(known[i].local);
		r->world_size = env_long(known[i].size);
		r->launcher = known[i].launcher;
		break;
	}
	if (gethostname(r->host, sizeof r->host - 1) != 0)
		snprintf(r->host, sizeof r->host, "localhost");
}

int pl_rank_expand(const char *option, const char *in, const struct pl_rank *r, char *out,
		   size_t len, struct pl_error *err)
{
	size_t o = 0;
	for (const char *p = in; *p; p++) {
		char piece[300];
		const char *add = piece;
		if (*p != '%' || !p[1]) {
			piece[0] = *p;
			piece[1] = '\0';
		} else {
			switch (p[1]) {
			case 'r':
				snprintf(piece, sizeof piece, "%ld", r->rank);
				break;
			case 'l':
				snprintf(piece, sizeof piece, "%ld", r->local_rank < 0 ? 0 : r->local_rank);
				break;
			case 'h':
				add = r->host;
				break;
			case 'p':
				snprintf(piece, sizeof piece, "%ld", (long)getpid());
				break;
			case '%':
				snprintf(piece, sizeof piece, "%%");
				break;
			default:
				snprintf(piece, sizeof piece, "%%%c", p[1]);
				break;
			}
			p++;
		}
		size_t n = strlen(add);
		if (o + n + 1 > len)
			return pl_error_set(err, PL_EINPUT, "option '%s': '%s' is too long once expanded",
					    option, in);
		memcpy(out + o, add, n);
		o += n;
	}
	out[o] = '\0';
	return PL_OK;
}

int pl_rank_in(const char *option, const char *list, long rank, struct pl_error *err)
{
	int in = 0;
	const char *p = list;
	do {
		char *end;
		errno = 0;
		long lo = strtol(p, &end, 10), hi = lo;
		if (end == p || lo < 0 || errno || *p == '-' || *p == '+' || *p == ' ')
			goto bad;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p || hi < lo || errno || *p == '-' || *p == '+' || *p == ' ')
				goto bad;
		}
		if (*end != ',' && *end != '\0')
			goto bad;
		in |= rank >= lo && rank <= hi;
		p = *end ? end + 1 : end;
	} while (*p);
	if (p > list && p[-1] == ',')
		goto bad;
	return in;
bad:
	return pl_error_set(err, PL_EINPUT,
			    "option '%s': expected ranks such as 0,3 or 0-3, got '%s'", option,
			    list);
}

static json_t *num_or_null(long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

json_t *pl_rank_json(const struct pl_rank *r)
{
	return json_pack("{s:o, s:o, s:o, s:s, s:s}", "rank", num_or_null(r->rank), "local_rank",
			 num_or_null(r->local_rank), "world_size", num_or_null(r->world_size),
			 "host", r->host, "launcher", r->launcher);
}

int pl_rank_shared_name(const char *name, const struct pl_rank *r)
{
	if (strcmp(r->launcher, "none") == 0 || r->world_size == 1)
		return 0;
	int has_r = 0, has_p = 0, has_h = 0, has_l = 0;
	for (const char *p = name; *p; p++) {
		if (*p != '%' || !p[1])
			continue;
		has_r |= p[1] == 'r';
		has_p |= p[1] == 'p';
		has_h |= p[1] == 'h';
		has_l |= p[1] == 'l';
		p++; /* "%%r" is a literal %r */
	}
	return !(has_r || has_p || (has_h && has_l));
}
