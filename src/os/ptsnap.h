/*
 * Every thread of a process stopped at one instant (ptrace), its registers
 * and the top of its stack read, something done while they stand still,
 * then all let go: `perfloop dump --native`. x86-64 only (the registers'
 * layout); elsewhere PL_EINPUT says so.
 */
#ifndef PL_PTSNAP_H
#define PL_PTSNAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct pl_ptsnap_thread {
	pid_t tid;
	int stopped;	   /* stood still and was read (else left out) */
	uint64_t regs[17]; /* DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */
	uint8_t *stack;	   /* from rsp, stack_len bytes */
	size_t stack_len;
};

/* Seize and stop every thread of pid, read each one's registers and up to
 * stack_max bytes of its stack, call fn(arg) while they all stand still,
 * then detach (signals that arrived meanwhile are passed on). A thread
 * that does not stop within a second is left out (stopped 0). *out: n
 * threads, freed by pl_ptsnap_free. PL_EINPUT with a one-line message
 * where pid cannot be traced (the rights that would allow it). */
int pl_ptsnap_take(pid_t pid, size_t stack_max, void (*fn)(void *), void *arg,
		   struct pl_ptsnap_thread **out, size_t *n, struct pl_error *err);
void pl_ptsnap_free(struct pl_ptsnap_thread *t, size_t n);

#endif
