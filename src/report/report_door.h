/*
 * src/report/: showing the evidence: text and Markdown reports, the HTML page, flame
 * graph SVGs and the differential one of two profiles, the merge of ranks'
 * summaries and profiles.
 *
 * May include: util/ through decide/; never a folder above it (scripts/check-layers
 * fails on that). This header is the folder's door: a command or another
 * folder may include it to use all of the folder; modules inside include
 * each other's headers directly.
 */
#ifndef PL_REPORT_DOOR_H
#define PL_REPORT_DOOR_H

#include "flamediff.h"
#include "htmlreport.h"
#include "intake.h"
#include "merge.h"
#include "report.h"

#endif
