/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The registry of the deletion protocols (protocols.c): the list, in the
 * order "-p all" runs them, one line each below, naming the struct
 * protocol that proto_<name>.c defines; and how a program looks them up.
 * The only header that names a protocol: protocol.h, which every
 * protocol and driver includes, names none.  The lines are read where
 * PROTOCOL() is defined (protocols.c makes the list from them).
 */
#ifndef EPOLL_DISABLE_PROTOCOLS_H
#define EPOLL_DISABLE_PROTOCOLS_H

#include "protocol.h"

extern const struct protocol *const protocols[];
extern const unsigned int nr_protocols;

/* The protocol of that name, or NULL */
const struct protocol *protocol_named(const char *name);

#endif /* EPOLL_DISABLE_PROTOCOLS_H */

#ifdef PROTOCOL
PROTOCOL(disable)
PROTOCOL(global)
PROTOCOL(deferred)
PROTOCOL(slots)
PROTOCOL(uring)
PROTOCOL(naive)
#endif
