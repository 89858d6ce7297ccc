/*
 * FNV-1a, 64 bit: the one non-cryptographic hash perfloop uses, for ids
 * that must stay stable across runs and versions (finding ids, hashed host
 * names). Not for anything an attacker chooses.
 */
#ifndef PL_HASH_H
#define PL_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PL_FNV_INIT 0xcbf29ce484222325ULL

static inline uint64_t pl_fnv1a_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static inline uint64_t pl_fnv1a(uint64_t h, const char *s)
{
	return s ? pl_fnv1a_bytes(h, s, strlen(s)) : h;
}

#endif
