/*
 * Machine fingerprint: /proc/cpuinfo, sysfs topology and cpufreq, uname and
 * the load average; the toolchain from the measured executable itself (the
 * ELF .comment section that GCC and clang write, read with libelf) and, for
 * Python, by asking the interpreter once. The host name is hashed (FNV-1a)
 * so a summary can be shared without naming the machine.
 */
#include "fingerprint.h"

#include <ctype.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "fsio.h"
#include "hash.h"
#include "spawn.h"


static void cpuinfo(struct pl_fingerprint *fp)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	snprintf(fp->cpu_model, sizeof(fp->cpu_model), "unknown");
	if (!f)
		return;
	char line[512];
	/* physical cores: distinct (physical id, core id) pairs */
	long pairs[1024];
	int npairs = 0;
	long phys = 0;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		char *val = colon + 1;
		while (*val == ' ')
			val++;
		val[strcspn(val, "\n")] = '\0';
		if (strncmp(line, "model name", 10) == 0 && strcmp(fp->cpu_model, "unknown") == 0)
			snprintf(fp->cpu_model, sizeof(fp->cpu_model), "%s", val);
		else if (strncmp(line, "physical id", 11) == 0)
			phys = atol(val);
		else if (strncmp(line, "core id", 7) == 0) {
			long key = phys * 100000 + atol(val);
			int seen = 0;
			for (int i = 0; i < npairs; i++)
				seen |= pairs[i] == key;
			if (!seen && npairs < 1024)
				pairs[npairs++] = key;
		}
	}
	fclose(f);
	fp->physical_cores = npairs > 0 ? npairs : fp->logical_cores;
}

void pl_fingerprint_read(struct pl_fingerprint *fp)
{
	memset(fp, 0, sizeof(*fp));
	fp->pinned_cpu = -1;
	fp->logical_cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
	cpuinfo(fp);

	char buf[128];
	if (pl_fsio_first_line("/sys/devices/system/cpu/smt/active", buf, sizeof(buf)) == 0)
		snprintf(fp->smt, sizeof(fp->smt), "%s", atoi(buf) ? "on" : "off");
	else
		snprintf(fp->smt, sizeof(fp->smt), "%s",
			 fp->physical_cores < fp->logical_cores ? "on" : "unknown");

	struct utsname u;
	if (uname(&u) == 0)
		snprintf(fp->kernel, sizeof(fp->kernel), "%s", u.release);
	else
		snprintf(fp->kernel, sizeof(fp->kernel), "unknown");

	if (pl_fsio_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", fp->governor,
			    sizeof(fp->governor)) != 0)
		snprintf(fp->governor, sizeof(fp->governor), "unknown");

	snprintf(fp->turbo, sizeof(fp->turbo), "unknown");
	if (pl_fsio_first_line("/sys/devices/system/cpu/intel_pstate/no_turbo", buf, sizeof(buf)) == 0)
		snprintf(fp->turbo, sizeof(fp->turbo), "%s", atoi(buf) ? "off" : "on");
	else if (pl_fsio_first_line("/sys/devices/system/cpu/cpufreq/boost", buf, sizeof(buf)) == 0)
		snprintf(fp->turbo, sizeof(fp->turbo), "%s", atoi(buf) ? "on" : "off");

	double la[1];
	fp->loadavg_1m = getloadavg(la, 1) == 1 ? la[0] : -1;

	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	uint64_t h = pl_fnv1a(PL_FNV_INIT, host);
	snprintf(fp->hostname_hash, sizeof(fp->hostname_hash), "%016llx", (unsigned long long)h);
}

int pl_elf_compiler(const char *path, char *out, size_t len)
{
	out[0] = '\0';
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	int rc = -1;
	if (e && elf_kind(e) == ELF_K_ELF && elf_getshdrstrndx(e, &shstrndx) == 0) {
		for (Elf_Scn *s = elf_nextscn(e, NULL); s; s = elf_nextscn(e, s)) {
			GElf_Shdr sh;
			if (!gelf_getshdr(s, &sh))
				continue;
			const char *name = elf_strptr(e, shstrndx, sh.sh_name);
			if (!name || strcmp(name, ".comment") != 0)
				continue;
			Elf_Data *d = elf_getdata(s, NULL);
			if (!d || !d->d_buf || d->d_size == 0)
				break;
			/* NUL-separated strings; keep the first compiler-looking one */
			const char *p = d->d_buf, *end = p + d->d_size;
			while (p < end) {
				size_t l = strnlen(p, (size_t)(end - p));
				if (l > 0) {
					snprintf(out, len, "%.*s", (int)l, p);
					rc = 0;
					if (strstr(out, "GCC") || strstr(out, "clang"))
						break;
				}
				p += l + 1;
			}
			break;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

/* The interpreter named by a script's "#!" line (resolving /usr/bin/env). */
static char *shebang_interpreter(const char *path)
{
	char line[256];
	if (pl_fsio_first_line(path, line, sizeof(line)) != 0 || strncmp(line, "#!", 2) != 0)
		return NULL;
	char *p = line + 2;
	while (*p == ' ')
		p++;
	char *interp = strtok(p, " \t");
	if (!interp)
		return NULL;
	if (strcmp(interp, "/usr/bin/env") == 0 || strcmp(interp, "/bin/env") == 0) {
		char *prog = strtok(NULL, " \t");
		while (prog && prog[0] == '-')
			prog = strtok(NULL, " \t");
		return prog ? pl_spawn_which(prog) : NULL;
	}
	return strdup(interp);
}

static int is_python(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return strncmp(base, "python", 6) == 0;
}

static void python_version(const char *interp, char *out, size_t len)
{
	char *argv[] = {(char *)interp, "-c",
			"import sys; print('%d.%d.%d' % sys.version_info[:3])", NULL};
	char buf[64];
	if (pl_spawn_capture(argv, 10, buf, sizeof(buf)) == 0)
		snprintf(out, len, "%s", buf);
}

/* An ELF program that runs CPython inside: libpython linked in (DT_NEEDED),
 * or the interpreter built in (a _PyRuntime symbol or .PyRuntime section). */
static int elf_embeds_python(const char *path)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx;
	int yes = 0;
	if (e && elf_kind(e) == ELF_K_ELF && elf_getshdrstrndx(e, &shstrndx) == 0) {
		for (Elf_Scn *s = elf_nextscn(e, NULL); s && !yes; s = elf_nextscn(e, s)) {
			GElf_Shdr sh;
			if (!gelf_getshdr(s, &sh))
				continue;
			const char *name = elf_strptr(e, shstrndx, sh.sh_name);
			if (name && strcmp(name, ".PyRuntime") == 0)
				yes = 1;
			if (sh.sh_type != SHT_DYNAMIC && sh.sh_type != SHT_DYNSYM &&
			    sh.sh_type != SHT_SYMTAB)
				continue;
			Elf_Data *d = elf_getdata(s, NULL);
			if (!d || sh.sh_entsize == 0)
				continue;
			size_t n = sh.sh_size / sh.sh_entsize;
			for (size_t i = 0; i < n && !yes; i++) {
				if (sh.sh_type == SHT_DYNAMIC) {
					GElf_Dyn dyn;
					if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
						continue;
					const char *lib = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
					yes = lib && strncmp(lib, "libpython3", 10) == 0;
				} else {
					GElf_Sym sym;
					if (!gelf_getsym(d, (int)i, &sym))
						continue;
					const char *sn = elf_strptr(e, sh.sh_link, sym.st_name);
					yes = sn && strcmp(sn, "_PyRuntime") == 0;
				}
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return yes;
}

/* A script run by a shell (a launcher, a container's entry point) that
 * names python in its first 4 KiB. */
static int script_mentions_python(const char *path)
{
	char buf[4097];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 2 || buf[0] != '#' || buf[1] != '!')
		return 0;
	buf[n] = '\0';
	return strstr(buf, "python") != NULL;
}

int pl_command_is_python(const char *argv0)
{
	char *exe = pl_spawn_which(argv0);
	if (!exe)
		return 0;
	char *interp = shebang_interpreter(exe);
	int yes = is_python(exe) || (interp && is_python(interp)) ||
		  (interp ? script_mentions_python(exe) : elf_embeds_python(exe));
	free(interp);
	free(exe);
	return yes;
}

void pl_fingerprint_toolchain(struct pl_fingerprint *fp, char *const *argv)
{
	char *exe = pl_spawn_which(argv[0]);
	if (!exe)
		return;
	char *interp = shebang_interpreter(exe);
	const char *python = NULL;
	if (is_python(exe))
		python = exe;
	else if (interp && is_python(interp))
		python = interp;
	if (python)
		python_version(python, fp->python, sizeof(fp->python));
	if (!python && !interp)
		pl_elf_compiler(exe, fp->compiler, sizeof(fp->compiler));
	free(interp);
	free(exe);
}

json_t *pl_fingerprint_to_json(const struct pl_fingerprint *fp)
{
	json_t *o = json_pack("{s:s, s:i, s:i, s:s, s:s, s:s, s:s, s:f, s:s?, s:s?, s:s}", "cpu_model",
			 fp->cpu_model, "logical_cores", fp->logical_cores, "physical_cores",
			 fp->physical_cores, "smt", fp->smt, "kernel", fp->kernel, "governor",
			 fp->governor, "turbo", fp->turbo, "loadavg_1m", fp->loadavg_1m, "compiler",
			 fp->compiler[0] ? fp->compiler : NULL, "python",
			 fp->python[0] ? fp->python : NULL, "hostname_hash", fp->hostname_hash);
	if (o)
		json_object_set_new(o, "pinned_cpu",
				    fp->pinned_cpu >= 0 ? json_integer(fp->pinned_cpu) : json_null());
	return o;
}
