/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The load beside the fuzz, and the pool's files (epoll_ctl_fuzz_load.c),
 * for main()
 */
#ifndef EPOLL_CTL_FUZZ_LOAD_H
#define EPOLL_CTL_FUZZ_LOAD_H

void *waiter(void *arg);
void *writer(void *arg);
void *churner(void *arg);
/* The pool's files and the event pages: NULL, or what failed */
const char *setup(void);

#endif /* EPOLL_CTL_FUZZ_LOAD_H */
