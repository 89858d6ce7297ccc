/*
 * FNV-1a, 64 bit: the one non-cryptographic hash perfloop uses, for ids
 * that must stay stable across runs and versions (finding ids, hashed host
 * names). Not for anything an attacker chooses.
 */
#ifndef PL_HASH_H
#define PL_HASH_H

#include <stdint.h>

#define PL_FNV_INIT 0xcbf29ce484222325ULL

static inline uint64_t pl_fnv1a(uint64_t h, const char *s)
{
	for (const char *p = s; p && *p; p++) {
		h ^= (unsigned char)*p;
		h *= 0x100000001b3ULL;
	}
	return h;
}

#endif
