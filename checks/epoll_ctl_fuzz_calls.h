/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fuzz (epoll_ctl_fuzz_calls.c), for main(): the fuzzer threads and
 * their report
 */
#ifndef EPOLL_CTL_FUZZ_CALLS_H
#define EPOLL_CTL_FUZZ_CALLS_H

#include <stddef.h>

#include "epoll_ctl_fuzz_common.h"

/* A fuzzer thread: th->ops random calls, each answer checked */
void *fuzzer(void *arg);
/* The call @th is making, or made last: for a fuzzer that hung */
void fuzzer_call_str(struct thread *th, char *buf, size_t len);
/* The unexpected answers kept, and how many more there were */
void print_reports(unsigned long unexpected_calls);
/* Every answer, by op and by result */
void print_counts(unsigned long count[NR_CLASSES][NR_RESULTS + 1]);

#endif /* EPOLL_CTL_FUZZ_CALLS_H */
