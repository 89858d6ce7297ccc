/*
 * Byte offsets into CPython 3.12's internal structures (LP64), as
 * pystack.c reads them. 3.12 publishes no _Py_DebugOffsets, so these come
 * from its headers; tests/cli/py_layout.c fails to compile against a 3.12
 * whose structures differ. Debian has no 3.12: checked against Ubuntu
 * 24.04's 3.12.3 (docs/profile.md says how).
 */
#ifndef PL_PY312_H
#define PL_PY312_H

/* _PyRuntimeState */
#define PL_PY312_RT_INTERP_HEAD 40 /* interpreters.head */
/* PyInterpreterState (the GIL moved here in 3.12) */
#define PL_PY312_IS_NEXT 0
#define PL_PY312_IS_THREADS_HEAD 72	/* threads.head */
#define PL_PY312_IS_GIL_LAST_HOLDER 1048 /* _gil.last_holder */
#define PL_PY312_IS_GIL_LOCKED 1056	/* _gil.locked */
/* PyThreadState */
#define PL_PY312_TS_NEXT 8
#define PL_PY312_TS_CFRAME 56
#define PL_PY312_TS_NATIVE_TID 144 /* native_thread_id */
#define PL_PY312_TS_CHUNK 232	   /* datastack_chunk */
#define PL_PY312_TS_TOP 240	   /* datastack_top */
/* _PyCFrame */
#define PL_PY312_CF_CURRENT_FRAME 0
/* _PyInterpreterFrame */
#define PL_PY312_FR_CODE 0 /* f_code */
#define PL_PY312_FR_PREVIOUS 8
#define PL_PY312_FR_PREV_INSTR 56
#define PL_PY312_FR_OWNER 70
#define PL_PY312_FR_SIZE 72 /* up to localsplus */
#define PL_PY312_OWNER_CSTACK 3
/* PyCodeObject */
#define PL_PY312_CO_FIRSTLINENO 68
#define PL_PY312_CO_FILENAME 112
#define PL_PY312_CO_QUALNAME 128
#define PL_PY312_CO_LINETABLE 136
#define PL_PY312_CO_CODE_ADAPTIVE 192
/* objects */
#define PL_PY312_OB_TYPE 8
#define PL_PY312_VAR_SIZE 16
#define PL_PY312_BYTES_DATA 32
#define PL_PY312_STR_LENGTH 16
#define PL_PY312_STR_STATE 32
#define PL_PY312_STR_ASCII_DATA 40   /* sizeof(PyASCIIObject) */
#define PL_PY312_STR_COMPACT_DATA 56 /* sizeof(PyCompactUnicodeObject) */
#define PL_PY312_CHUNK_SIZE 8

#endif
