/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bench's deletion protocols, in the order "-p all" runs them: one
 * line each, naming the struct protocol that proto_<name>.c defines.  No
 * include guard: each includer defines PROTOCOL() before it.
 */
PROTOCOL(disable)
PROTOCOL(global)
PROTOCOL(deferred)
PROTOCOL(slots)
PROTOCOL(uring)
PROTOCOL(naive)
