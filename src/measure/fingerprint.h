/*
 * The identity of the machine and toolchain a measurement was taken on, so
 * that `verify` can refuse to compare runs from different environments.
 */
#ifndef PL_FINGERPRINT_H
#define PL_FINGERPRINT_H

#include <jansson.h>

struct pl_fingerprint {
	char cpu_model[256];
	int logical_cores;
	int physical_cores;
	char smt[16]; /* "on", "off", "unknown" */
	char kernel[128];
	char governor[64]; /* "unknown" where cpufreq is not exposed */
	char turbo[16];	   /* "on", "off", "unknown" */
	double loadavg_1m;
	char compiler[256]; /* from the measured executable's .comment, or "" */
	char python[64];    /* version when the command runs Python, or "" */
	char hostname_hash[17];
	int pinned_cpu; /* the one CPU the commands ran on, -1 if not pinned */
};

/* Read the machine's identity. Never fails: unknowns say "unknown". */
void pl_fingerprint_read(struct pl_fingerprint *fp);
/* Fill compiler/python from the measured command's argv (no shell run). */
void pl_fingerprint_toolchain(struct pl_fingerprint *fp, char *const *argv);
/* argv0 (looked up in PATH) runs CPython: a Python interpreter, a script
 * whose "#!" line names one, a shell script that mentions python, or a
 * program with libpython linked or built in. */
int pl_command_is_python(const char *argv0);
json_t *pl_fingerprint_to_json(const struct pl_fingerprint *fp);

/* The compiler recorded in an ELF file's .comment section ("" if none). */
int pl_elf_compiler(const char *path, char *out, size_t len);

#endif
