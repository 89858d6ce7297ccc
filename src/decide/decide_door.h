/*
 * src/decide/: deciding: one candidate from findings (select), a change's verdict
 * (verify's rules), the ledger of verdicts.
 *
 * May include: util/ through scan/; never a folder above it (scripts/check-layers
 * fails on that). This header is the folder's door: a command or another
 * folder may include it to use all of the folder; modules inside include
 * each other's headers directly.
 */
#ifndef PL_DECIDE_DOOR_H
#define PL_DECIDE_DOOR_H

#include "ledger.h"
#include "select.h"
#include "verdict.h"

#endif
