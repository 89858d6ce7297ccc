/*
 * Where the fields perfloop profile needs sit inside the _Py_DebugOffsets
 * structure that CPython 3.13 and later publish at the start of
 * _PyRuntime (Include/internal/pycore_debug_offsets.h; pycore_runtime.h in
 * 3.13). The structure holds the offsets of the interpreter's own
 * structures, so perfloop reads those from the target rather than knowing
 * them; but the structure itself grows with each minor version, so the
 * position of each entry is per version. tests/cli/py_layout.c checks
 * every number here against offsetof() in the headers of each version
 * installed for the tests (t600-profile-layout.sh).
 */
#ifndef PL_PYDEBUG_H
#define PL_PYDEBUG_H

#include <stddef.h>

struct pl_pydebug_pos {
	int minor;
	size_t total; /* sizeof(_Py_DebugOffsets) */
	size_t version, free_threaded;
	size_t rt_interp_head;
	size_t is_next, is_threads_head, is_gil_locked, is_gil_holder;
	size_t ts_size, ts_next, ts_current_frame, ts_native_tid, ts_chunk;
	size_t fr_size, fr_previous, fr_executable, fr_instr, fr_owner;
	size_t co_size, co_filename, co_qualname, co_linetable, co_firstlineno, co_code_adaptive;
	size_t ob_type;
	size_t bytes_size, bytes_sval;
	size_t str_state, str_length, str_ascii_size;
	size_t str_compact_size; /* 0: not published (3.13, 3.14) */
};

static const struct pl_pydebug_pos pl_pydebug_pos[] = {
    {
	.minor = 13,
	.total = 584,
	.version = 8,
	.free_threaded = 16,
	.rt_interp_head = 40,
	.is_next = 64,
	.is_threads_head = 72,
	.is_gil_locked = 136,
	.is_gil_holder = 144,
	.ts_size = 152,
	.ts_next = 168,
	.ts_current_frame = 184,
	.ts_native_tid = 200,
	.ts_chunk = 208,
	.fr_size = 224,
	.fr_previous = 232,
	.fr_executable = 240,
	.fr_instr = 248,
	.fr_owner = 264,
	.co_size = 272,
	.co_filename = 280,
	.co_qualname = 296,
	.co_linetable = 304,
	.co_firstlineno = 312,
	.co_code_adaptive = 344,
	.ob_type = 360,
	.bytes_size = 520,
	.bytes_sval = 528,
	.str_state = 544,
	.str_length = 552,
	.str_ascii_size = 560,
	.str_compact_size = 0,
    },
    {
	.minor = 14,
	.total = 760,
	.version = 8,
	.free_threaded = 16,
	.rt_interp_head = 40,
	.is_next = 64,
	.is_threads_head = 72,
	.is_gil_locked = 144,
	.is_gil_holder = 152,
	.ts_size = 176,
	.ts_next = 192,
	.ts_current_frame = 208,
	.ts_native_tid = 224,
	.ts_chunk = 232,
	.fr_size = 248,
	.fr_previous = 256,
	.fr_executable = 264,
	.fr_instr = 272,
	.fr_owner = 288,
	.co_size = 312,
	.co_filename = 320,
	.co_qualname = 336,
	.co_linetable = 344,
	.co_firstlineno = 352,
	.co_code_adaptive = 384,
	.ob_type = 408,
	.bytes_size = 600,
	.bytes_sval = 608,
	.str_state = 624,
	.str_length = 632,
	.str_ascii_size = 640,
	.str_compact_size = 0,
    },
    {
	.minor = 15,
	.total = 888,
	.version = 8,
	.free_threaded = 16,
	.rt_interp_head = 40,
	.is_next = 64,
	.is_threads_head = 72,
	.is_gil_locked = 144,
	.is_gil_holder = 152,
	.ts_size = 176,
	.ts_next = 192,
	.ts_current_frame = 208,
	.ts_native_tid = 248,
	.ts_chunk = 256,
	.fr_size = 312,
	.fr_previous = 320,
	.fr_executable = 328,
	.fr_instr = 336,
	.fr_owner = 352,
	.co_size = 376,
	.co_filename = 384,
	.co_qualname = 400,
	.co_linetable = 408,
	.co_firstlineno = 416,
	.co_code_adaptive = 448,
	.ob_type = 472,
	.bytes_size = 696,
	.bytes_sval = 704,
	.str_state = 720,
	.str_length = 728,
	.str_ascii_size = 736,
	.str_compact_size = 744,
    },
};

#endif
