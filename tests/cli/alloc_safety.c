/* Programs that profile --alloc's sampler must not change (t618): each
 * counts what it allocates itself, so the exact totals can be checked.
 *   vfork [exit]  32 MiB in 1 KiB blocks between each of: a vfork child
 *           that fails to exec and calls _exit, one that calls exit() (it
 *           runs, and uses up, the parent's exit handlers), a
 *           clone(CLONE_VM | CLONE_VFORK) child that calls _exit, a
 *           posix_spawn of a missing program; then leak_c's 16 MiB in 256
 *           B blocks, kept. Ends by returning from main, or by exit(0)
 *   signal FILE  for 3 s the main thread allocates (1 KiB blocks) while a
 *           100 us timer's handler allocates and frees (malloc and mmap)
 *           and threads that only mmap are started and signalled; writes
 *           "CALLS BYTES" it made to FILE. Must end, and count them all
 *   plugin  dlopen("libplug.so") by bare name, found through this
 *           program's RUNPATH ($ORIGIN/lib; alloc_plugin.c), and run it
 *   embed LIB  load libpython (LIB) late and run Python that keeps 32 MiB
 *           in grab(): its frames are found though no dlopen is wrapped
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static volatile char sink;

__attribute__((noinline)) static void churn(int mib)
{
	for (int i = 0; i < mib * 1024; i++) {
		char *p = malloc(1024);
		p[0] = (char)i;
		sink += p[0];
		free(p);
	}
}

__attribute__((noinline)) static char *leak_c(void)
{
	char *p = malloc(256);
	p[1] = 1;
	return p;
}

static char *const missing[] = {"/nonexistent/program", NULL};

static int cloned(void *arg)
{
	(void)arg;
	execve(missing[0], missing, environ);
	_exit(127);
}

static int vfork_mode(int by_exit)
{
	pid_t c;
	churn(32);
	if ((c = vfork()) == 0) {
		execve(missing[0], missing, environ);
		_exit(127);
	}
	waitpid(c, NULL, 0);
	churn(32);
	if ((c = vfork()) == 0) {
		execve(missing[0], missing, environ);
		exit(127); /* undefined after vfork, done all the same */
	}
	waitpid(c, NULL, 0);
	churn(32);
	static char stack[65536] __attribute__((aligned(16)));
	c = clone(cloned, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
	if (c > 0)
		waitpid(c, NULL, 0);
	churn(32);
	if (posix_spawn(&c, missing[0], NULL, NULL, missing, environ) == 0)
		waitpid(c, NULL, 0);
	churn(32);
	for (int i = 0; i < 65536; i++)
		sink += leak_c()[1];
	printf("done\n");
	fflush(stdout);
	if (by_exit)
		exit(0);
	return 0;
}

/* ---- signal ---- */

static atomic_ulong calls, bytes;
static pid_t main_tid;

static void on_signal(int sig)
{
	(void)sig;
	/* malloc in a handler is not async-signal-safe; programs do it, on
	 * the main thread here, whose tcache bin for 700 B is primed */
	if ((pid_t)syscall(SYS_gettid) == main_tid) {
		char *volatile q = malloc(700); /* volatile: not optimized away */
		free(q);
		atomic_fetch_add(&calls, 1);
		atomic_fetch_add(&bytes, 700);
	}
	/* mmap and munmap are system calls: safe anywhere */
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED) {
		munmap(m, 4096);
		atomic_fetch_add(&calls, 1);
		atomic_fetch_add(&bytes, 4096);
	}
}

static void *mapper(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++) {
		void *m =
		    mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED) {
			munmap(m, 8192);
			atomic_fetch_add(&calls, 1);
			atomic_fetch_add(&bytes, 8192);
		}
	}
	return NULL;
}

static int signal_mode(const char *out)
{
	main_tid = (pid_t)syscall(SYS_gettid);
	free(malloc(700)); /* primed: the handler's blocks come from the tcache */
	atomic_fetch_add(&calls, 1);
	atomic_fetch_add(&bytes, 700);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	struct itimerval it = {{0, 100}, {0, 100}};
	setitimer(ITIMER_REAL, &it, NULL);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned long rounds = 0;
	do {
		for (int i = 0; i < 64; i++) {
			char *p = malloc(1024);
			p[0] = (char)i;
			sink += p[0];
			free(p);
		}
		atomic_fetch_add(&calls, 64);
		atomic_fetch_add(&bytes, 64 * 1024);
		if (++rounds % 8 == 0) {
			/* a thread signalled while it takes and gives back its
			 * counter line */
			pthread_t th;
			if (pthread_create(&th, NULL, mapper, NULL) == 0) {
				for (int k = 0; k < 20; k++)
					pthread_kill(th, SIGUSR1);
				pthread_join(th, NULL);
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 3000000000L);
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	FILE *f = fopen(out, "w");
	if (!f)
		return 1;
	fprintf(f, "%lu %lu\n", atomic_load(&calls), atomic_load(&bytes));
	return fclose(f) != 0;
}

/* ---- plugin ---- */

static int plugin_mode(void)
{
	void *h = dlopen("libplug.so", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "alloc_safety: %s\n", dlerror());
		return 1;
	}
	int (*run)(void) = (int (*)(void))dlsym(h, "plug_run");
	if (!run)
		return 1;
	printf("plugin %d\n", run());
	return 0;
}

static int embed_mode(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	void (*init)(void) = h ? (void (*)(void))dlsym(h, "Py_Initialize") : NULL;
	int (*run)(const char *) = h ? (int (*)(const char *))dlsym(h, "PyRun_SimpleString") : NULL;
	if (!init || !run)
		return 1;
	init();
	return run("def grab():\n    return [bytearray(4096) for _ in range(8192)]\nk = "
		   "grab()\n") != 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "vfork") == 0)
		return vfork_mode(argc > 2 && strcmp(argv[2], "exit") == 0);
	if (strcmp(mode, "signal") == 0 && argc > 2)
		return signal_mode(argv[2]);
	if (strcmp(mode, "plugin") == 0)
		return plugin_mode();
	if (strcmp(mode, "embed") == 0 && argc > 2)
		return embed_mode(argv[2]);
	fprintf(stderr, "usage: alloc_safety vfork [exit] | signal FILE | plugin | embed LIB\n");
	return 2;
}
