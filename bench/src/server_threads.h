/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The server's threads (server_threads.c), for main(): each a pthread
 * start routine, the setup before them and the stop after.
 */
#ifndef EPOLL_DISABLE_SERVER_THREADS_H
#define EPOLL_DISABLE_SERVER_THREADS_H

#include <pthread.h>

/* A worker: a waiter of the protocol's */
void *worker(void *arg);
void *acceptor(void *arg);
void *reaper(void *arg);
void *idler(void *arg);
/* The server's state and the run's (P), then the protocol's */
int setup(void);
/* Stop every thread; close and free what is left, as at exit */
void stop(pthread_t acc, pthread_t can, pthread_t idl);

#endif /* EPOLL_DISABLE_SERVER_THREADS_H */
