/*
 * Where perfloop reads a threading.Thread's name in CPython 3.11 to 3.15
 * (LP64): 3.11 to 3.13 give the kernel no thread names, and 3.14's are cut
 * to 15 bytes and not changed by a rename from another thread. The
 * thread started by threading runs Thread._bootstrap(self) at its root,
 * so the Thread is that frame's first local; its name is the `_name`
 * attribute, in the instance's dictionary or, while none was made, in
 * the values the instance holds beside the keys its type shares:
 *   3.11: values pointer at obj-32, dictionary pointer at obj-24;
 *   3.12: at obj-24 a dictionary, or the values pointer minus 1 (bit 0
 *         set: _PyDictOrValues_SetValues stores values - 1);
 *   3.13+: at obj-24 a dictionary; the values inline after the object
 *         (obj + tp_basicsize: 8 bytes of header, then the pointers).
 * The shared keys are the type's ht_cached_keys. tests/cli/py_layout.c
 * checks each number against the headers of every version installed for
 * the tests (3.12 has none here: its numbers come from its headers read by
 * hand, as docs/profile.md says).
 */
#ifndef PL_PYOBJ_H
#define PL_PYOBJ_H

#include <stddef.h>

/* _PyInterpreterFrame.localsplus (3.14 on: tagged references, the low two
 * bits) and PyHeapTypeObject.ht_cached_keys, by minor version; 0: not
 * known (no names read) */
static inline size_t pl_pyobj_fr_locals(int minor)
{
	return minor >= 11 && minor <= 13 ? 72 : minor == 14 || minor == 15 ? 80 : 0;
}

static inline size_t pl_pyobj_cached_keys(int minor)
{
	return minor == 11 ? 872 : minor >= 12 && minor <= 14 ? 880 : minor == 15 ? 888 : 0;
}

/* dump --locals: PyCodeObject.co_localsplusnames (a tuple of str) and
 * co_localspluskinds (bytes), the same in 3.11 to 3.13 (0: not known) */
#define PL_PYOBJ_CO_NAMES_311 96
#define PL_PYOBJ_CO_KINDS_311 104
static inline size_t pl_pyobj_co_names(int minor)
{
	return minor >= 11 && minor <= 13 ? PL_PYOBJ_CO_NAMES_311 : 0;
}
/* ... and the objects a value is read from, in every version read */
#define PL_PYOBJ_TUPLE_ITEM 24 /* PyTupleObject.ob_item */
#define PL_PYOBJ_TYPE_NAME 24  /* PyTypeObject.tp_name */
#define PL_PYOBJ_LONG_DIGIT 24 /* PyLongObject's 30-bit digits (3.12+: long_value.ob_digit) */
#define PL_PYOBJ_LONG_TAG 16   /* 3.12+: long_value.lv_tag (digits << 3 | sign) */
#define PL_PYOBJ_FLOAT_VAL 16  /* PyFloatObject.ob_fval */
#define PL_PYOBJ_DICT_USED 16  /* PyDictObject.ma_used */
#define PL_PYOBJ_SET_USED 24   /* PySetObject.used */
#define PL_PYOBJ_CELL_REF 16   /* PyCellObject.ob_ref */
#define PL_PYOBJ_VAR_SIZE 16   /* PyVarObject.ob_size */
#define PL_PYOBJ_BYTES_DATA 32 /* PyBytesObject.ob_sval */

#define PL_PYOBJ_TP_BASICSIZE 32
#define PL_PYOBJ_TP_FLAGS 168
#define PL_PYOBJ_MANAGED_DICT (-24)
#define PL_PYOBJ_VALUES_311 (-32)
#define PL_PYOBJ_VALUES_HEADER_313 8 /* capacity, size, embedded, valid, padding */
#define PL_PYOBJ_TPFLAGS_INLINE_VALUES (1ul << 2) /* 3.13+ */
#define PL_PYOBJ_TPFLAGS_MANAGED_DICT (1ul << 4)
/* PyDictObject */
#define PL_PYOBJ_DICT_KEYS 32
#define PL_PYOBJ_DICT_VALUES 40
/* PyDictKeysObject: its entries follow the index table of
 * 1 << dk_log2_index_bytes bytes; kind 0 entries are hash, key, value;
 * kinds 1 (str keys) and 2 (split) key, value */
#define PL_PYOBJ_DK_LOG2_INDEX_BYTES 9
#define PL_PYOBJ_DK_KIND 10
#define PL_PYOBJ_DK_NENTRIES 24
#define PL_PYOBJ_DK_INDICES 32

#endif
