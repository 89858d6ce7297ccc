/* profile --syscalls' known program (t614): 10000 getppid, 1000 more in a
 * forked child, 5000 one-byte writes to /dev/null, 2000 one-byte reads of
 * a file, 150 opens of one file (kept open), 120 write+fsync pairs, then
 * a 60 ms sleep in nap() (the slowest call, with its stack); exits with
 * argv[2] (default 0). argv[1]: a scratch directory. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static void nap(void)
{
	struct timespec ts = {0, 60 * 1000 * 1000};
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	char path[4096];
	for (int i = 0; i < 10000; i++)
		getppid();
	pid_t c = fork();
	if (c == 0) {
		for (int i = 0; i < 1000; i++)
			getppid();
		_exit(0);
	}
	waitpid(c, NULL, 0);
	int null = open("/dev/null", O_WRONLY);
	for (int i = 0; i < 5000; i++)
		if (write(null, "x", 1) != 1)
			return 1;
	snprintf(path, sizeof path, "%s/data", argv[1]);
	int d = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 2000; i++)
		if (write(d, "y", 1) != 1)
			return 1;
	lseek(d, 0, SEEK_SET);
	char ch;
	for (int i = 0; i < 2000; i++)
		if (read(d, &ch, 1) != 1)
			return 1;
	for (int i = 0; i < 150; i++) /* kept open: each path is read while it is */
		if (open(path, O_RDONLY) < 0)
			return 1;
	snprintf(path, sizeof path, "%s/log", argv[1]);
	int l = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 120; i++) {
		if (write(l, "record\n", 7) != 7)
			return 1;
		fsync(l);
	}
	nap();
	return argc > 2 ? atoi(argv[2]) : 0;
}
