/*
 * A program that embeds CPython through a shared libpython3.X.so, as
 * applications embedding Python do: t603 builds it against each root's
 * libpython and checks that perfloop profile finds the interpreter in the
 * library rather than in the executable. Runs the script named by argv[1].
 */
#include <Python.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	FILE *f = fopen(argv[1], "r");
	if (!f)
		return 2;
	Py_Initialize();
	int rc = PyRun_SimpleFile(f, argv[1]);
	fclose(f);
	if (Py_FinalizeEx() < 0)
		return 1;
	return rc ? 1 : 0;
}
