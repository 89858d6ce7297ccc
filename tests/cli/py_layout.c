/*
 * Compiled by t600-profile-layout.sh against one CPython's headers, then
 * run. For 3.11 and 3.12 it fails to compile if any offset perfloop
 * profile reads (src/profile/python/py311.h, py312.h) differs from that interpreter's
 * own structures; for 3.13 and later it checks where perfloop looks inside
 * the _Py_DebugOffsets the interpreter publishes (src/profile/python/pydebug.h), and
 * the layout facts perfloop assumes beside them, and exits 1 on a
 * difference.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_dict.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_object.h>
#include <internal/pycore_runtime.h>
#include <stddef.h>
#include <stdio.h>

#include "pyobj.h"

#define CHECK(type, field, ours)                                                                   \
	_Static_assert(offsetof(type, field) == (ours), #type "." #field " moved")

#if PY_MINOR_VERSION == 11
#include <internal/pycore_gil.h>

#include "py311.h"
CHECK(_PyRuntimeState, interpreters.head, PL_PY311_RT_INTERP_HEAD);
CHECK(_PyRuntimeState, ceval.gil.last_holder, PL_PY311_RT_GIL_LAST_HOLDER);
CHECK(_PyRuntimeState, ceval.gil.locked, PL_PY311_RT_GIL_LOCKED);
CHECK(PyInterpreterState, next, PL_PY311_IS_NEXT);
CHECK(PyInterpreterState, threads.head, PL_PY311_IS_THREADS_HEAD);
CHECK(PyThreadState, next, PL_PY311_TS_NEXT);
CHECK(PyThreadState, cframe, PL_PY311_TS_CFRAME);
CHECK(PyThreadState, native_thread_id, PL_PY311_TS_NATIVE_TID);
CHECK(PyThreadState, datastack_chunk, PL_PY311_TS_CHUNK);
CHECK(PyThreadState, datastack_top, PL_PY311_TS_TOP);
CHECK(_PyCFrame, current_frame, PL_PY311_CF_CURRENT_FRAME);
CHECK(_PyInterpreterFrame, f_code, PL_PY311_FR_CODE);
CHECK(_PyInterpreterFrame, previous, PL_PY311_FR_PREVIOUS);
CHECK(_PyInterpreterFrame, prev_instr, PL_PY311_FR_PREV_INSTR);
CHECK(_PyInterpreterFrame, owner, PL_PY311_FR_OWNER);
CHECK(_PyInterpreterFrame, localsplus, PL_PY311_FR_SIZE);
CHECK(PyCodeObject, co_firstlineno, PL_PY311_CO_FIRSTLINENO);
CHECK(PyCodeObject, co_filename, PL_PY311_CO_FILENAME);
CHECK(PyCodeObject, co_qualname, PL_PY311_CO_QUALNAME);
CHECK(PyCodeObject, co_linetable, PL_PY311_CO_LINETABLE);
CHECK(PyCodeObject, co_code_adaptive, PL_PY311_CO_CODE_ADAPTIVE);
CHECK(PyObject, ob_type, PL_PY311_OB_TYPE);
CHECK(PyVarObject, ob_size, PL_PY311_VAR_SIZE);
CHECK(PyBytesObject, ob_sval, PL_PY311_BYTES_DATA);
CHECK(PyASCIIObject, length, PL_PY311_STR_LENGTH);
CHECK(PyASCIIObject, state, PL_PY311_STR_STATE);
CHECK(_PyStackChunk, size, PL_PY311_CHUNK_SIZE);
CHECK(PyLongObject, ob_digit, PL_PYOBJ_LONG_DIGIT);
_Static_assert(sizeof(PyASCIIObject) == PL_PY311_STR_ASCII_DATA, "PyASCIIObject size");
_Static_assert(sizeof(PyCompactUnicodeObject) == PL_PY311_STR_COMPACT_DATA,
	       "PyCompactUnicodeObject size");
_Static_assert(FRAME_OWNED_BY_FRAME_OBJECT == 2, "frame owners");

#elif PY_MINOR_VERSION == 12
#include "py312.h"
CHECK(_PyRuntimeState, interpreters.head, PL_PY312_RT_INTERP_HEAD);
CHECK(PyInterpreterState, next, PL_PY312_IS_NEXT);
CHECK(PyInterpreterState, threads.head, PL_PY312_IS_THREADS_HEAD);
CHECK(PyInterpreterState, _gil.last_holder, PL_PY312_IS_GIL_LAST_HOLDER);
CHECK(PyInterpreterState, _gil.locked, PL_PY312_IS_GIL_LOCKED);
CHECK(PyThreadState, next, PL_PY312_TS_NEXT);
CHECK(PyThreadState, cframe, PL_PY312_TS_CFRAME);
CHECK(PyThreadState, native_thread_id, PL_PY312_TS_NATIVE_TID);
CHECK(PyThreadState, datastack_chunk, PL_PY312_TS_CHUNK);
CHECK(PyThreadState, datastack_top, PL_PY312_TS_TOP);
CHECK(_PyCFrame, current_frame, PL_PY312_CF_CURRENT_FRAME);
CHECK(_PyInterpreterFrame, f_code, PL_PY312_FR_CODE);
CHECK(_PyInterpreterFrame, previous, PL_PY312_FR_PREVIOUS);
CHECK(_PyInterpreterFrame, prev_instr, PL_PY312_FR_PREV_INSTR);
CHECK(_PyInterpreterFrame, owner, PL_PY312_FR_OWNER);
CHECK(_PyInterpreterFrame, localsplus, PL_PY312_FR_SIZE);
CHECK(PyCodeObject, co_firstlineno, PL_PY312_CO_FIRSTLINENO);
CHECK(PyCodeObject, co_filename, PL_PY312_CO_FILENAME);
CHECK(PyCodeObject, co_qualname, PL_PY312_CO_QUALNAME);
CHECK(PyCodeObject, co_linetable, PL_PY312_CO_LINETABLE);
CHECK(PyCodeObject, co_code_adaptive, PL_PY312_CO_CODE_ADAPTIVE);
CHECK(PyObject, ob_type, PL_PY312_OB_TYPE);
CHECK(PyVarObject, ob_size, PL_PY312_VAR_SIZE);
CHECK(PyBytesObject, ob_sval, PL_PY312_BYTES_DATA);
CHECK(PyASCIIObject, length, PL_PY312_STR_LENGTH);
CHECK(PyASCIIObject, state, PL_PY312_STR_STATE);
CHECK(_PyStackChunk, size, PL_PY312_CHUNK_SIZE);
_Static_assert(sizeof(PyASCIIObject) == PL_PY312_STR_ASCII_DATA, "PyASCIIObject size");
_Static_assert(sizeof(PyCompactUnicodeObject) == PL_PY312_STR_COMPACT_DATA,
	       "PyCompactUnicodeObject size");
_Static_assert(FRAME_OWNED_BY_FRAME_OBJECT == 2 && FRAME_OWNED_BY_CSTACK == PL_PY312_OWNER_CSTACK,
	       "frame owners");

#else /* 3.13 and later: the debug offsets */
#include "pydebug.h"
/* what pystack.c assumes beyond the published offsets */
_Static_assert(offsetof(PyThreadState, datastack_top) ==
		   offsetof(PyThreadState, datastack_chunk) + 8,
	       "datastack_top follows datastack_chunk");
CHECK(_PyStackChunk, size, 8);
_Static_assert(FRAME_OWNED_BY_FRAME_OBJECT == 2, "frame owners");
#if PY_MINOR_VERSION == 14
_Static_assert(FRAME_OWNED_BY_CSTACK == 4, "entry frames: 3 and 4");
#elif PY_MINOR_VERSION == 13
_Static_assert(FRAME_OWNED_BY_CSTACK == 3, "entry frames: 3");
#else
_Static_assert(FRAME_OWNED_BY_INTERPRETER == 3, "entry frames: 3");
#endif
#if PY_MINOR_VERSION < 15
_Static_assert(sizeof(PyCompactUnicodeObject) == sizeof(PyASCIIObject) + 16,
	       "PyCompactUnicodeObject: PyASCIIObject, utf8_length, utf8");
#endif
#endif

_Static_assert(sizeof(_Py_CODEUNIT) == 2, "code unit size");

/* what dump --locals reads (pyobj.h), in the versions it reads (3.14
 * moved some: a tuple's items follow its cached hash; it is refused) */
#if PY_MINOR_VERSION <= 13
CHECK(PyCodeObject, co_localsplusnames, PL_PYOBJ_CO_NAMES_311);
CHECK(PyCodeObject, co_localspluskinds, PL_PYOBJ_CO_KINDS_311);
CHECK(_PyInterpreterFrame, localsplus, 72);
#if PY_MINOR_VERSION >= 12
CHECK(PyLongObject, long_value.lv_tag, PL_PYOBJ_LONG_TAG);
CHECK(PyLongObject, long_value.ob_digit, PL_PYOBJ_LONG_DIGIT);
#endif
CHECK(PyTupleObject, ob_item, PL_PYOBJ_TUPLE_ITEM);
CHECK(PyTypeObject, tp_name, PL_PYOBJ_TYPE_NAME);
CHECK(PyFloatObject, ob_fval, PL_PYOBJ_FLOAT_VAL);
CHECK(PyDictObject, ma_used, PL_PYOBJ_DICT_USED);
CHECK(PySetObject, used, PL_PYOBJ_SET_USED);
CHECK(PyCellObject, ob_ref, PL_PYOBJ_CELL_REF);
CHECK(PyVarObject, ob_size, PL_PYOBJ_VAR_SIZE);
CHECK(PyBytesObject, ob_sval, PL_PYOBJ_BYTES_DATA);
_Static_assert(PyLong_SHIFT == 30, "30-bit digits");
#endif

/* where thread names are read (pyobj.h), in every version */
CHECK(PyTypeObject, tp_basicsize, PL_PYOBJ_TP_BASICSIZE);
CHECK(PyTypeObject, tp_flags, PL_PYOBJ_TP_FLAGS);
CHECK(PyDictObject, ma_keys, PL_PYOBJ_DICT_KEYS);
CHECK(PyDictObject, ma_values, PL_PYOBJ_DICT_VALUES);
CHECK(PyDictKeysObject, dk_log2_index_bytes, PL_PYOBJ_DK_LOG2_INDEX_BYTES);
CHECK(PyDictKeysObject, dk_kind, PL_PYOBJ_DK_KIND);
CHECK(PyDictKeysObject, dk_nentries, PL_PYOBJ_DK_NENTRIES);
CHECK(PyDictKeysObject, dk_indices, PL_PYOBJ_DK_INDICES);
_Static_assert(sizeof(PyDictKeyEntry) == 24 && sizeof(PyDictUnicodeEntry) == 16, "dict entries");
_Static_assert(DICT_KEYS_GENERAL == 0 && DICT_KEYS_UNICODE == 1 && DICT_KEYS_SPLIT == 2,
	       "dict kinds");
_Static_assert(MANAGED_DICT_OFFSET == PL_PYOBJ_MANAGED_DICT, "managed dictionary");
_Static_assert(Py_TPFLAGS_MANAGED_DICT == PL_PYOBJ_TPFLAGS_MANAGED_DICT, "managed dict flag");
#if PY_MINOR_VERSION >= 13
_Static_assert(Py_TPFLAGS_INLINE_VALUES == PL_PYOBJ_TPFLAGS_INLINE_VALUES, "inline values flag");
CHECK(PyDictValues, values, PL_PYOBJ_VALUES_HEADER_313);
#else
CHECK(PyDictValues, values, 0);
#endif

int main(void)
{
	if (offsetof(PyHeapTypeObject, ht_cached_keys) != pl_pyobj_cached_keys(PY_MINOR_VERSION) ||
	    offsetof(_PyInterpreterFrame, localsplus) != pl_pyobj_fr_locals(PY_MINOR_VERSION)) {
		printf("%s: ht_cached_keys at %zu, localsplus at %zu; pyobj.h says %zu, %zu\n",
		       PY_VERSION, offsetof(PyHeapTypeObject, ht_cached_keys),
		       offsetof(_PyInterpreterFrame, localsplus),
		       pl_pyobj_cached_keys(PY_MINOR_VERSION), pl_pyobj_fr_locals(PY_MINOR_VERSION));
		return 1;
	}
#if PY_MINOR_VERSION >= 13
	const struct pl_pydebug_pos *P = NULL;
	for (size_t i = 0; i < sizeof pl_pydebug_pos / sizeof *pl_pydebug_pos; i++)
		if (pl_pydebug_pos[i].minor == PY_MINOR_VERSION)
			P = &pl_pydebug_pos[i];
	if (!P) {
		printf("%s: not in src/profile/python/pydebug.h\n", PY_VERSION);
		return 1;
	}
	int bad = 0;
#define POS(ours, field)                                                                           \
	if (P->ours != offsetof(_Py_DebugOffsets, field)) {                                        \
		printf("%s: _Py_DebugOffsets." #field " is at %zu, pydebug.h says %zu\n",          \
		       PY_VERSION, offsetof(_Py_DebugOffsets, field), P->ours);                     \
		bad = 1;                                                                           \
	}
	if (P->total != sizeof(_Py_DebugOffsets)) {
		printf("%s: sizeof(_Py_DebugOffsets) %zu, pydebug.h says %zu\n", PY_VERSION,
		       sizeof(_Py_DebugOffsets), P->total);
		bad = 1;
	}
	POS(version, version)
	POS(free_threaded, free_threaded)
	POS(rt_interp_head, runtime_state.interpreters_head)
	POS(is_next, interpreter_state.next)
	POS(is_threads_head, interpreter_state.threads_head)
	POS(is_gil_locked, interpreter_state.gil_runtime_state_locked)
	POS(is_gil_holder, interpreter_state.gil_runtime_state_holder)
	POS(ts_size, thread_state.size)
	POS(ts_next, thread_state.next)
	POS(ts_current_frame, thread_state.current_frame)
	POS(ts_native_tid, thread_state.native_thread_id)
	POS(ts_chunk, thread_state.datastack_chunk)
	POS(fr_size, interpreter_frame.size)
	POS(fr_previous, interpreter_frame.previous)
	POS(fr_executable, interpreter_frame.executable)
	POS(fr_instr, interpreter_frame.instr_ptr)
	POS(fr_owner, interpreter_frame.owner)
	POS(co_size, code_object.size)
	POS(co_filename, code_object.filename)
	POS(co_qualname, code_object.qualname)
	POS(co_linetable, code_object.linetable)
	POS(co_firstlineno, code_object.firstlineno)
	POS(co_code_adaptive, code_object.co_code_adaptive)
	POS(ob_type, pyobject.ob_type)
	POS(bytes_size, bytes_object.ob_size)
	POS(bytes_sval, bytes_object.ob_sval)
	POS(str_state, unicode_object.state)
	POS(str_length, unicode_object.length)
	POS(str_ascii_size, unicode_object.asciiobject_size)
#if PY_MINOR_VERSION >= 15
	POS(str_compact_size, unicode_object.compactunicodeobject_size)
#else
	if (P->str_compact_size != 0)
		bad = 1;
#endif
	if (bad)
		return 1;
#endif
	printf("%s: layout matches\n", PY_VERSION);
	return 0;
}
