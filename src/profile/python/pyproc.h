/*
 * Finding a CPython interpreter in another process and reading its memory
 * from outside, without stopping it.
 *
 * pl_pyproc_attach() reads /proc/PID/maps, finds the file that holds the
 * interpreter (a mapped libpython3.X.so, else the executable), looks up
 * `_PyRuntime`, `Py_Version` and `PyCode_Type` in its ELF symbol tables
 * (.dynsym, then .symtab) with libelf, adds the load bias and reads the
 * version. Memory is read with process_vm_readv(2), which needs the same
 * access as ptrace (same user and Yama's ptrace_scope allowing it, or
 * CAP_SYS_PTRACE).
 */
#ifndef PL_PYPROC_H
#define PL_PYPROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct pl_pyproc {
	pid_t pid;
	unsigned long hexversion; /* PY_VERSION_HEX of the target */
	int major, minor, micro;
	uint64_t runtime;   /* address of _PyRuntime in the target */
	uint64_t code_type; /* address of PyCode_Type, 0 when unknown */
	char binary[1024];  /* the file the symbols came from */
};

/* PL_OK; PL_EINPUT with a sentence when the process does not exist or is
 * not CPython; PL_ENOTSUP when it runs a CPython we cannot read (the
 * version is named);
 * PL_ESYS when its memory cannot be read (the capability is named).
 * A process that is still starting (before exec, or before the dynamic
 * loader mapped libpython) reads as not CPython: callers launching a
 * program retry. */
int pl_pyproc_attach(pid_t pid, struct pl_pyproc *p, struct pl_error *err);

/* Read exactly len bytes at addr of process pid: 0, or -1 with errno. */
int pl_pyproc_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* The command line of pid, arguments joined by spaces, into buf. */
void pl_pyproc_cmdline(pid_t pid, char *buf, size_t len);

/* The address of _PyRuntime in the ELF file at path (its symbol tables,
 * else 3.12's .PyRuntime section): 0, or -1 when it has none or is not
 * ELF. The reader attach uses, on its own (tests, the ELF fuzz target). */
int pl_pyproc_elf_runtime(const char *path, uint64_t *runtime);

/* Whether a file whose path contains needle is mapped into pid. */
int pl_pyproc_maps_has(pid_t pid, const char *needle);

#endif
