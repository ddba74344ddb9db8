/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sequential phase (epoll_ctl_fuzz_seq.c), for main()
 */
#ifndef EPOLL_CTL_FUZZ_SEQ_H
#define EPOLL_CTL_FUZZ_SEQ_H

/* NULL if every answer and report is as the model says; or the first */
const char *sequential(void);
/* Its TAP line: was DISABLE asked in every state, and right each time? */
void sequential_coverage(void);

#endif /* EPOLL_CTL_FUZZ_SEQ_H */
