/* profile --alloc's known program (t612): each site allocates a known
 * number of bytes.
 *   site_a  64 MiB in 1 KiB blocks, each freed at once
 *   site_b  32 MiB in 64 KiB blocks, all live together, then freed (the peak)
 *   leak_c  16 MiB in 256 B blocks, never freed (live at exit)
 * argv[1]: "threads" (site_a in 4 threads, 4x the bytes), "fork" (leak_c
 * in a forked child that exits), "crash" (killed by SIGSEGV after site_a),
 * "grow" (site_a and leak_c in ten rounds: live bytes rise all through),
 * "hot" (hot_d: 1,000,000 blocks of 48 B, each freed at once, beside the
 * default run's sites: the hot allocation site), "live" (a thread makes 200
 * blocks of 1 KiB and is still running when the process exits: its counts
 * must be in the exact totals though its exit never came)
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile char sink;

__attribute__((noinline)) static char *site_a(void)
{
	char *p = malloc(1024);
	p[1] = 1;
	return p;
}
__attribute__((noinline)) static char *site_b(void)
{
	char *p = malloc(65536);
	p[1] = 1;
	return p;
}
__attribute__((noinline)) static char *leak_c(void)
{
	char *p = malloc(256);
	p[1] = 1;
	return p;
}

__attribute__((noinline)) static char *hot_d(void)
{
	char *p = malloc(48);
	p[1] = 1;
	return p;
}

static void *churn(void *arg)
{
	(void)arg;
	for (int i = 0; i < 65536; i++) {
		char *p = site_a();
		sink += p[1];
		free(p);
	}
	return NULL;
}

static void leak(void)
{
	for (int i = 0; i < 65536; i++)
		sink += leak_c()[1];
}

static int ready[2];

static void *hold(void *arg)
{
	(void)arg;
	static char *kept[200];
	for (int i = 0; i < 200; i++)
		kept[i] = site_a();
	if (write(ready[1], "x", 1) != 1)
		abort();
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "live") == 0) {
		pthread_t t;
		char c;
		if (pipe(ready) != 0 || pthread_create(&t, NULL, hold, NULL) != 0 ||
		    read(ready[0], &c, 1) != 1)
			return 1;
		return 0;
	}
	if (strcmp(mode, "threads") == 0) {
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, churn, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (strcmp(mode, "grow") == 0) {
		for (int r = 0; r < 10; r++) {
			for (int i = 0; i < 6554; i++) {
				char *p = site_a();
				sink += p[1];
				free(p);
				sink += leak_c()[1];
			}
			usleep(2000);
		}
		return 0;
	}
	churn(NULL);
	if (strcmp(mode, "hot") == 0)
		for (int i = 0; i < 1000000; i++) {
			char *p = hot_d();
			sink += p[1];
			free(p);
		}
	if (strcmp(mode, "crash") == 0)
		raise(SIGSEGV);
	static char *held[512];
	for (int i = 0; i < 512; i++)
		held[i] = site_b();
	for (int i = 0; i < 512; i++)
		free(held[i]);
	if (strcmp(mode, "fork") == 0) {
		pid_t c = fork();
		if (c == 0) {
			leak();
			exit(0);
		}
		int st;
		waitpid(c, &st, 0);
		return 0;
	}
	leak();
	return 0;
}
