/*
 * Where CPython keeps what a Python stack is read from, per minor version
 * (LP64): struct pylayout, filled from the tables built in for 3.11 and
 * 3.12 (py311.h, py312.h) or, for 3.13 and later, from the
 * _Py_DebugOffsets at the start of the interpreter's _PyRuntime
 * (pydebug.h). Two readers share it: pystack.c, which reads another
 * process, and src/preload/alloc.c, which walks its own thread's frames
 * inside the measured program (profile --alloc).
 */
#ifndef PL_PYLAYOUT_H
#define PL_PYLAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "py311.h"
#include "py312.h"
#include "pydebug.h"

/* One CPython minor version's layout: byte offsets into its structures.
 * 3.11 and 3.12 are tables built in (py311.h, py312.h); 3.13 and later are
 * filled in from the _Py_DebugOffsets the target publishes (pydebug.h). */
struct pylayout {
	int minor;
	size_t rt_interp_head;
	int gil_in_interp; /* the GIL's fields are in the interpreter (3.12+) */
	size_t gil_holder, gil_locked;
	size_t gil_lo, gil_read; /* read [gil_lo, gil_lo + gil_read) of their base */
	size_t is_next, is_threads_head, is_lo, is_read; /* read [is_lo, is_lo + is_read) */
	int frame_in_ts; /* the current frame is a field of the thread state (3.13+) */
	size_t ts_next, ts_cframe, ts_current_frame, ts_native_tid, ts_chunk, ts_top, ts_read;
	size_t cf_current_frame;
	size_t fr_code, fr_previous, fr_instr, fr_owner, fr_read;
	size_t fr_is_entry; /* 3.11's is_entry flag; 0: marked by C-stack frames (3.12+) */
	uint64_t code_mask; /* a tagged reference to the code object (3.14+) */
	int fr_owner_max;   /* frames owned by the thread, a generator, a frame object */
	int fr_entry_max;   /* above that: the interpreter's entry frames, not reported */
	size_t co_firstlineno, co_filename, co_qualname, co_linetable, co_code_adaptive, co_read;
	size_t ob_type, var_size, bytes_data;
	size_t str_length, str_state, str_ascii_data, str_compact_data;
	size_t chunk_size;
	size_t fp_off, fp_len; /* the code object's identity fields, read per frame */
};

/* CPython 3.11 (checked against 3.11.2 and 3.11.7). */
static const struct pylayout pl_py311_layout = {
    .minor = 11,
    .rt_interp_head = PL_PY311_RT_INTERP_HEAD,
    .gil_holder = PL_PY311_RT_GIL_LAST_HOLDER,
    .gil_locked = PL_PY311_RT_GIL_LOCKED,
    .is_next = PL_PY311_IS_NEXT,
    .is_threads_head = PL_PY311_IS_THREADS_HEAD,
    .ts_next = PL_PY311_TS_NEXT,
    .ts_cframe = PL_PY311_TS_CFRAME,
    .ts_native_tid = PL_PY311_TS_NATIVE_TID,
    .ts_chunk = PL_PY311_TS_CHUNK,
    .ts_top = PL_PY311_TS_TOP,
    .cf_current_frame = PL_PY311_CF_CURRENT_FRAME,
    .fr_code = PL_PY311_FR_CODE,
    .fr_previous = PL_PY311_FR_PREVIOUS,
    .fr_instr = PL_PY311_FR_PREV_INSTR,
    .fr_owner = PL_PY311_FR_OWNER,
    .fr_is_entry = PL_PY311_FR_IS_ENTRY,
    .fr_read = PL_PY311_FR_SIZE,
    .code_mask = ~(uint64_t)0,
    .fr_owner_max = 2,
    .fr_entry_max = 2, /* 3.11 links C-stack frames through _PyCFrame instead */
    .co_firstlineno = PL_PY311_CO_FIRSTLINENO,
    .co_filename = PL_PY311_CO_FILENAME,
    .co_qualname = PL_PY311_CO_QUALNAME,
    .co_linetable = PL_PY311_CO_LINETABLE,
    .co_code_adaptive = PL_PY311_CO_CODE_ADAPTIVE,
    .ob_type = PL_PY311_OB_TYPE,
    .var_size = PL_PY311_VAR_SIZE,
    .bytes_data = PL_PY311_BYTES_DATA,
    .str_length = PL_PY311_STR_LENGTH,
    .str_state = PL_PY311_STR_STATE,
    .str_ascii_data = PL_PY311_STR_ASCII_DATA,
    .str_compact_data = PL_PY311_STR_COMPACT_DATA,
    .chunk_size = PL_PY311_CHUNK_SIZE,
};

/* CPython 3.12 (checked against 3.12.3). */
static const struct pylayout pl_py312_layout = {
    .minor = 12,
    .rt_interp_head = PL_PY312_RT_INTERP_HEAD,
    .gil_in_interp = 1,
    .gil_holder = PL_PY312_IS_GIL_LAST_HOLDER,
    .gil_locked = PL_PY312_IS_GIL_LOCKED,
    .is_next = PL_PY312_IS_NEXT,
    .is_threads_head = PL_PY312_IS_THREADS_HEAD,
    .ts_next = PL_PY312_TS_NEXT,
    .ts_cframe = PL_PY312_TS_CFRAME,
    .ts_native_tid = PL_PY312_TS_NATIVE_TID,
    .ts_chunk = PL_PY312_TS_CHUNK,
    .ts_top = PL_PY312_TS_TOP,
    .cf_current_frame = PL_PY312_CF_CURRENT_FRAME,
    .fr_code = PL_PY312_FR_CODE,
    .fr_previous = PL_PY312_FR_PREVIOUS,
    .fr_instr = PL_PY312_FR_PREV_INSTR,
    .fr_owner = PL_PY312_FR_OWNER,
    .fr_read = PL_PY312_FR_SIZE,
    .code_mask = ~(uint64_t)0,
    .fr_owner_max = 2,
    .fr_entry_max = PL_PY312_OWNER_CSTACK,
    .co_firstlineno = PL_PY312_CO_FIRSTLINENO,
    .co_filename = PL_PY312_CO_FILENAME,
    .co_qualname = PL_PY312_CO_QUALNAME,
    .co_linetable = PL_PY312_CO_LINETABLE,
    .co_code_adaptive = PL_PY312_CO_CODE_ADAPTIVE,
    .ob_type = PL_PY312_OB_TYPE,
    .var_size = PL_PY312_VAR_SIZE,
    .bytes_data = PL_PY312_BYTES_DATA,
    .str_length = PL_PY312_STR_LENGTH,
    .str_state = PL_PY312_STR_STATE,
    .str_ascii_data = PL_PY312_STR_ASCII_DATA,
    .str_compact_data = PL_PY312_STR_COMPACT_DATA,
    .chunk_size = PL_PY312_CHUNK_SIZE,
};

static inline size_t pl_pylayout_off_(const uint8_t *d, size_t at)
{
	uint64_t v;
	memcpy(&v, d + at, 8);
	return (size_t)v;
}

/* What pl_pylayout_debug found wrong. */
enum {
	PL_PYLAYOUT_OK = 0,
	PL_PYLAYOUT_NO_COOKIE,	   /* not _Py_DebugOffsets */
	PL_PYLAYOUT_OTHER_VERSION, /* they describe another version than P's */
	PL_PYLAYOUT_FREE_THREADED, /* a no-GIL build: other structures */
};

/* The pl_pydebug_pos entry for minor, or NULL. */
static inline const struct pl_pydebug_pos *pl_pylayout_pos(int minor)
{
	for (size_t i = 0; i < sizeof pl_pydebug_pos / sizeof *pl_pydebug_pos; i++)
		if (pl_pydebug_pos[i].minor == minor)
			return &pl_pydebug_pos[i];
	return NULL;
}

/* Fill L from d, the first P->total bytes of a 3.13+ _PyRuntime (the
 * read sizes are the reader's business). PL_PYLAYOUT_OK or what is wrong. */
static inline int pl_pylayout_debug(struct pylayout *L, const uint8_t *d,
				    const struct pl_pydebug_pos *P)
{
	uint64_t hex, ft;
	if (memcmp(d, "xdebugpy", 8) != 0)
		return PL_PYLAYOUT_NO_COOKIE;
	memcpy(&hex, d + P->version, 8);
	memcpy(&ft, d + P->free_threaded, 8);
	if ((hex >> 24 & 0xff) != 3 || (int)(hex >> 16 & 0xff) != P->minor)
		return PL_PYLAYOUT_OTHER_VERSION;
	if (ft)
		return PL_PYLAYOUT_FREE_THREADED;
	memset(L, 0, sizeof *L);
#define OFF(field) pl_pylayout_off_(d, P->field)
	L->minor = P->minor;
	L->rt_interp_head = OFF(rt_interp_head);
	L->gil_in_interp = 1;
	L->gil_holder = OFF(is_gil_holder);
	L->gil_locked = OFF(is_gil_locked);
	L->is_next = OFF(is_next);
	L->is_threads_head = OFF(is_threads_head);
	L->frame_in_ts = 1;
	L->ts_next = OFF(ts_next);
	L->ts_current_frame = OFF(ts_current_frame);
	L->ts_native_tid = OFF(ts_native_tid);
	L->ts_chunk = OFF(ts_chunk);
	L->ts_top = L->ts_chunk + 8; /* datastack_top follows datastack_chunk */
	L->fr_code = OFF(fr_executable);
	L->fr_previous = OFF(fr_previous);
	L->fr_instr = OFF(fr_instr);
	L->fr_owner = OFF(fr_owner);
	L->fr_read = 0;
	/* 3.14 tags the reference in its low bits */
	L->code_mask = P->minor >= 14 ? ~(uint64_t)3 : ~(uint64_t)0;
	L->fr_owner_max = 2;
	L->fr_entry_max = P->minor == 14 ? 4 : 3; /* interpreter / C stack */
	L->co_firstlineno = OFF(co_firstlineno);
	L->co_filename = OFF(co_filename);
	L->co_qualname = OFF(co_qualname);
	L->co_linetable = OFF(co_linetable);
	L->co_code_adaptive = OFF(co_code_adaptive);
	L->ob_type = OFF(ob_type);
	L->var_size = OFF(bytes_size);
	L->bytes_data = OFF(bytes_sval);
	L->str_length = OFF(str_length);
	L->str_state = OFF(str_state);
	L->str_ascii_data = OFF(str_ascii_size);
	/* PyCompactUnicodeObject: PyASCIIObject, utf8_length, utf8 */
	L->str_compact_data = P->str_compact_size ? OFF(str_compact_size) : L->str_ascii_data + 16;
	L->chunk_size = 8;
#undef OFF
	return PL_PYLAYOUT_OK;
}

#endif
