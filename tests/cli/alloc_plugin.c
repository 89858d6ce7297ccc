/* t618's plugins for alloc_safety's "plugin" mode, one source built three
 * ways, all into one directory:
 *   -DDEP   libdep.so: dep_value() 40
 *   -DDEP2  libdep2.so: dep2_value() 2
 *   (none)  libplug.so, RUNPATH $ORIGIN, needing libdep.so: plug_run()
 *           allocates plug_site's 16 MiB (4 KiB blocks, freed), loads
 *           libdep2.so by bare name (its own RUNPATH finds it) and
 *           returns dep_value() + dep2_value()
 */
#include <dlfcn.h>
#include <stdlib.h>

#if defined(DEP)
int dep_value(void)
{
	return 40;
}
#elif defined(DEP2)
int dep2_value(void)
{
	return 2;
}
#else
int dep_value(void);

static volatile char sink;

__attribute__((noinline)) static char *plug_site(void)
{
	char *p = malloc(4096);
	p[1] = 1;
	return p;
}

int plug_run(void)
{
	for (int i = 0; i < 4096; i++) {
		char *p = plug_site();
		sink += p[1];
		free(p);
	}
	void *h = dlopen("libdep2.so", RTLD_NOW);
	int (*two)(void) = h ? (int (*)(void))dlsym(h, "dep2_value") : NULL;
	return two ? dep_value() + two() : -1;
}
#endif
