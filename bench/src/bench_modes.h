/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bench's modes, each in a file of its own, which main() calls
 * (epoll_disable_bench.c) and which call nothing of main()'s file.
 */
#ifndef EPOLL_DISABLE_BENCH_MODES_H
#define EPOLL_DISABLE_BENCH_MODES_H

/* -M ops (bench_ops.c): one set size */
void run_ops(int size);
/* -M proto and -M reclaim (bench_proto.c) */
void run_protos(void);
/* -M burst (bench_burst.c) */
void run_bursts(void);

#endif /* EPOLL_DISABLE_BENCH_MODES_H */
