// SPDX-License-Identifier: GPL-2.0
/*
 * The registry of the deletion protocols: the list protocols.h's lines
 * make, and the look-up by name.  It points down to every proto_<name>.c,
 * and nothing below it (a protocol, protocol.c) points back: the
 * programs' main files and the server's driver use it.
 */
#include <string.h>

#include "protocols.h"

#define PROTOCOL(name)	extern const struct protocol proto_##name;
#include "protocols.h"
#undef PROTOCOL

const struct protocol *const protocols[] = {
#define PROTOCOL(name)	&proto_##name,
#include "protocols.h"
#undef PROTOCOL
};

const unsigned int nr_protocols = ARRAY_SIZE(protocols);

const struct protocol *protocol_named(const char *name)
{
	unsigned int i;

	for (i = 0; i < nr_protocols; i++)
		if (!strcmp(name, protocols[i]->name))
			return protocols[i];
	return NULL;
}
