/* Programs the allocation tracer must not change (t618):
 *   vfork    allocate 64 MiB in 1 KiB blocks, vfork a child that fails to
 *            exec and calls _exit, then 64 MiB more: all 128 MiB counted
 *   spawn    the same with posix_spawn of a missing program between
 *   signal   a timer whose handler frees (and allocates) at 2 kHz while
 *            the main thread allocates for 2 s: must end, not deadlock
 */
#define _GNU_SOURCE
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void churn(int mib)
{
	for (int i = 0; i < mib * 1024; i++) {
		char *p = malloc(1024);
		p[0] = (char)i;
		free(p);
	}
}

static volatile sig_atomic_t fired;

static void on_alarm(int sig)
{
	(void)sig;
	/* not async-signal-safe by POSIX, done by real programs all the same */
	free(malloc(64));
	fired++;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "vfork";
	if (strcmp(mode, "vfork") == 0 || strcmp(mode, "spawn") == 0) {
		churn(64);
		if (mode[0] == 'v') {
			pid_t c = vfork();
			if (c == 0) {
				execl("/nonexistent/program", "x", (char *)NULL);
				_exit(127);
			}
			waitpid(c, NULL, 0);
		} else {
			pid_t c;
			char *args[] = {"/nonexistent/program", NULL};
			if (posix_spawn(&c, args[0], NULL, NULL, args, environ) == 0)
				waitpid(c, NULL, 0);
		}
		churn(64);
		puts("done");
		return 0;
	}
	if (strcmp(mode, "signal") == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		struct itimerval it = {{0, 500}, {0, 500}};
		setitimer(ITIMER_REAL, &it, NULL);
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			churn(1);
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while (t.tv_sec - t0.tv_sec < 2);
		struct itimerval off = {{0, 0}, {0, 0}};
		setitimer(ITIMER_REAL, &off, NULL);
		printf("done %d\n", (int)fired);
		return 0;
	}
	return 2;
}
