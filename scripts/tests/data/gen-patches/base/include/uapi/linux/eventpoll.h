/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#define EPOLL_CTL_ADD 1
#define EPOLL_CTL_DEL 2
#define EPOLL_CTL_MOD 3
