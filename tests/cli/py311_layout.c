/*
 * Compiled by t600-profile-layout.sh against one CPython 3.11's headers:
 * fails to compile if any offset perfloop profile reads (src/lib/py311.h)
 * differs from that interpreter's own structures.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_gil.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#include <stddef.h>
#include <stdio.h>

#include "py311.h"

#define CHECK(type, field, ours)                                                                   \
	_Static_assert(offsetof(type, field) == (ours), #type "." #field " moved")

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
_Static_assert(sizeof(PyASCIIObject) == PL_PY311_STR_ASCII_DATA, "PyASCIIObject size");
_Static_assert(sizeof(PyCompactUnicodeObject) == PL_PY311_STR_COMPACT_DATA,
	       "PyCompactUnicodeObject size");
_Static_assert(sizeof(_Py_CODEUNIT) == 2, "code unit size");
_Static_assert(FRAME_OWNED_BY_FRAME_OBJECT == 2, "frame owners");

int main(void)
{
	printf("%s: layout matches\n", PY_VERSION);
	return 0;
}
