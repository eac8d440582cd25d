/* SPDX-License-Identifier: GPL-2.0 */
/* sim_wb.h - the simulator's WRITEBACK table (sim_wb.c). */
#ifndef SIM_WB_H
#define SIM_WB_H

#include "fq_sched.h"

/* One configuration: a policy and the tunables written after creation. */
struct sim_wb_cfg {
	const char *what;
	const char *policy;
	const char *set[8][2];	/* name, value; ends with a NULL name */
};

void sim_wb_table(const struct sim_wb_cfg *cfgs, int ncfg, u64 seed);

#endif /* SIM_WB_H */
