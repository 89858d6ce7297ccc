/*
 * Byte offsets into CPython 3.11's internal structures (LP64), as
 * pystack.c reads them. They come from CPython's own headers; the test
 * tests/cli/t600-profile-layout.sh compiles tests/cli/py_layout.c
 * against the headers of every CPython 3.11 installed here and fails to
 * compile if any of these differs from offsetof() there.
 */
#ifndef PL_PY311_H
#define PL_PY311_H

/* _PyRuntimeState */
#define PL_PY311_RT_INTERP_HEAD 40	/* interpreters.head */
#define PL_PY311_RT_GIL_LAST_HOLDER 368 /* ceval.gil.last_holder */
#define PL_PY311_RT_GIL_LOCKED 376	/* ceval.gil.locked */
/* PyInterpreterState */
#define PL_PY311_IS_NEXT 0
#define PL_PY311_IS_THREADS_HEAD 16 /* threads.head */
/* PyThreadState */
#define PL_PY311_TS_NEXT 8
#define PL_PY311_TS_CFRAME 56
#define PL_PY311_TS_NATIVE_TID 160 /* native_thread_id */
#define PL_PY311_TS_CHUNK 296	   /* datastack_chunk */
#define PL_PY311_TS_TOP 304	   /* datastack_top */
/* _PyCFrame */
#define PL_PY311_CF_CURRENT_FRAME 8
/* _PyInterpreterFrame */
#define PL_PY311_FR_CODE 32 /* f_code */
#define PL_PY311_FR_PREVIOUS 48
#define PL_PY311_FR_PREV_INSTR 56
#define PL_PY311_FR_IS_ENTRY 68 /* the first frame of its _PyEval_EvalFrameDefault call */
#define PL_PY311_FR_OWNER 69
#define PL_PY311_FR_SIZE 72 /* up to localsplus */
/* PyCodeObject */
#define PL_PY311_CO_FIRSTLINENO 72
#define PL_PY311_CO_FILENAME 112
#define PL_PY311_CO_QUALNAME 128
#define PL_PY311_CO_LINETABLE 136
#define PL_PY311_CO_CODE_ADAPTIVE 184

/* objects */
#define PL_PY311_OB_TYPE 8	     /* PyObject.ob_type */
#define PL_PY311_VAR_SIZE 16	     /* PyVarObject.ob_size */
#define PL_PY311_BYTES_DATA 32	     /* PyBytesObject.ob_sval */
#define PL_PY311_STR_LENGTH 16	     /* PyASCIIObject.length */
#define PL_PY311_STR_STATE 32	     /* PyASCIIObject.state */
#define PL_PY311_STR_ASCII_DATA 48   /* sizeof(PyASCIIObject) */
#define PL_PY311_STR_COMPACT_DATA 72 /* sizeof(PyCompactUnicodeObject) */
#define PL_PY311_CHUNK_SIZE 8	     /* _PyStackChunk.size */

#endif
