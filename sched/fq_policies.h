/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fq_policies.h - every dispatch policy of the core, one line each, in the
 * order of fq_policies[]; the first is the default.  FQ_POLICY(x) stands
 * for struct fq_policy fq_x_policy, defined in fq_x.c (see struct
 * fq_policy in fq_internal.h).  Read with FQ_POLICY() defined by the
 * includer, the way the kernel lists cgroup subsystems, so no guard.
 */
FQ_POLICY(cfq)
FQ_POLICY(sfq)
FQ_POLICY(fifo)
