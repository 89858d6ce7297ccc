/* A seed of the ELF fuzz target (built by CMake into fuzz-seeds/elf: with
 * DWARF, stripped, as a relocatable object). Two C++-mangled names given
 * by asm labels exercise the demangler without a C++ compiler. */
#include <stdio.h>

static int __attribute__((noinline)) leaf(int x)
{
	return x * 3 + 1;
}

int __attribute__((noinline)) box_get(int v) __asm__("_ZNK2ns3BoxIiE3getEv");
int __attribute__((noinline)) box_get(int v)
{
	return v * 2;
}

static int __attribute__((noinline)) mid(int x)
{
	int s = 0;
	for (int i = 0; i < x; i++)
		s += leaf(i) + box_get(i);
	return s;
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", mid(argc * 1000));
	return 0;
}
