/* A seed of the ELF fuzz target: a shared library that looks like
 * libpython to the _PyRuntime lookup (the symbol in 3.12's own .PyRuntime
 * section, Py_Version, PyCode_Type). */
struct rt {
	long a[8];
};
struct rt _PyRuntime __attribute__((section(".PyRuntime")));
const unsigned long Py_Version = 0x030b04f0;
struct rt PyCode_Type;

int Py_Main(int a)
{
	return a + (int)_PyRuntime.a[0];
}
