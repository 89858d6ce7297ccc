/*
 * A stand-in for a CPython perfloop profile must refuse: it exports
 * _PyRuntime and Py_Version as CPython does, with the version, debug
 * offsets cookie and free-threading flag given at compile time
 * (t602-profile-errors.sh), and sleeps.
 */
#include <stdint.h>
#include <unistd.h>

__attribute__((used)) struct {
	char cookie[8];
	uint64_t version;
	uint64_t free_threaded;
	char rest[4096];
} _PyRuntime = {FAKE_COOKIE, FAKE_VERSION, FAKE_FT, {0}};

__attribute__((used)) const unsigned long Py_Version = FAKE_VERSION;

int main(void)
{
	for (;;)
		pause();
}
