/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim_family.h - the device family: the core at its defaults on random
 * devices, the standard mixes on each, and the property they must hold
 * (sim_family.c, SIM-DEVICES.md "FAMILY").
 */
#ifndef SIM_FAMILY_H
#define SIM_FAMILY_H

/*
 * fq_sim --family [--n N] [--seed S] [--device K] [--mix NAME] [--trace]
 *	  [--why] [--jobs J] [--set NAME=VALUE]...
 * Returns the process's exit status: 0 when every case holds the
 * property, 1 when one does not, 2 on a usage error.
 */
int sim_family_main(int argc, char **argv);

#endif /* SIM_FAMILY_H */
