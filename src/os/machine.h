/*
 * The machine a benchmark runs on, as something perfloop acts on: which CPU
 * to pin the measured commands to, whether that CPU is busy right now (and
 * waiting a little until it is not), and the inventory behind `perfloop
 * system show|tune|reset`: every setting known to disturb timings, its value
 * here, its effect, and what can be done about it.
 *
 * Everything is read from /proc and /sys below a root that is "/" unless
 * PERFLOOP_SYSROOT names another (tests use a fake tree; tune then writes
 * there, never to the real machine).
 */
#ifndef PL_MACHINE_H
#define PL_MACHINE_H

#include <jansson.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>

#include "error.h"

/* --pin: PL_PIN_AUTO, PL_PIN_NONE, or a CPU number >= 0 */
#define PL_PIN_AUTO (-1)
#define PL_PIN_NONE (-2)

/* Parse "auto", "none" or a CPU number; -3 when it is none of these. */
int pl_machine_parse_pin(const char *s);

/* The CPU `--pin auto` uses: the highest-numbered CPU this process may run
 * on (the same one every time, so that a before and an after measured on
 * this machine ran on the same CPU; CPU 0 takes most housekeeping
 * interrupts). -1 when only one CPU is allowed: already pinned. */
int pl_machine_auto_cpu(void);

/* Pin this process (and so every child it starts) to cpu, keeping the old
 * mask in *saved. PL_EINPUT (with a message) when cpu is not allowed. */
int pl_machine_pin(int cpu, cpu_set_t *saved, struct pl_error *err);
void pl_machine_unpin(const cpu_set_t *saved);

/* Jiffies per CPU from /proc/stat. */
struct pl_cpu_times {
	int ncpu;
	unsigned long long busy[1024], total[1024];
};
int pl_machine_cpu_times(struct pl_cpu_times *t);
/* The busy share of cpu (-1: all CPUs) between two readings; NAN if unknown. */
double pl_machine_busy_share(const struct pl_cpu_times *a, const struct pl_cpu_times *b, int cpu);

/* Wait up to timeout_s (in 0.1 s steps) until cpu (-1: all) is less than
 * 10% busy with other work. */
struct pl_quiet {
	int checked;	  /* 0: not checked (timeout 0 or /proc/stat unreadable) */
	int quiet;	  /* it became quiet (or was) */
	double waited_s;  /* time spent waiting */
	double busy;	  /* the busy share last measured */
	double loadavg1;  /* the 1-minute load average at the end */
};
void pl_machine_wait_quiet(int cpu, double timeout_s, const volatile sig_atomic_t *interrupted,
			   struct pl_quiet *q);
json_t *pl_quiet_to_json(const struct pl_quiet *q);

/* `perfloop system show`: an array of {name, value, status ("ok", "warn",
 * "info"), effect, advice, tunable}. window_s: how long busy CPUs, busy
 * processes and interrupts are watched. */
json_t *pl_machine_inventory(double window_s);

/* `perfloop system tune`: set what can be set (governor, turbo/boost, the
 * NMI watchdog), recording the old values in state_path (a JSON file,
 * written atomically) for reset. *changed: what was set; errors for what
 * could not be, one line each in *failed. PL_OK when everything settable
 * was set or already right. */
int pl_machine_tune(const char *state_path, json_t **changed, json_t **failed,
		    struct pl_error *err);
/* `perfloop system reset`: write back what tune recorded, then remove the
 * record. PL_EINPUT when there is no record. */
int pl_machine_reset(const char *state_path, json_t **restored, json_t **failed,
		     struct pl_error *err);

#endif
