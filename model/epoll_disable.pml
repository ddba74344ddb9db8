/*
 * epoll_disable.pml - a Promela model of deleting EPOLLONESHOT items from an
 * epoll set that several threads wait on, with EPOLL_CTL_DISABLE and the
 * "delete when done" protocol, and two variants that must fail.
 *
 *   spin -a [-DNR=n] [-DNI=n] [-DND=n] [-DNW=n] [-DNAIVE | -DWRONG_KERNEL]
 *           [-DFREE_AFTER_UNLOCK] epoll_disable.pml
 *
 *   NR            reader threads (default 2)
 *   NI            items in the set, 1..3 (default 1)
 *   ND            items the deleting thread deletes, in order (default NI:
 *                 all of them); items ND..NI-1 are kept, and must still
 *                 have every arrival consumed by a reader
 *   NW            data arrivals in all (default 3 * NI), each on any item,
 *                 at any time; the wakeup process may also stop early
 *   (default)     DISABLE protocol on the patched kernel: must verify clean
 *   -DNAIVE       the deleting thread uses EPOLL_CTL_DEL under the item
 *                 mutex, no DISABLE: must fail (use after free)
 *   -DWRONG_KERNEL the DISABLE protocol on a kernel whose DISABLE returns 0
 *                 for an item whose event was handed out: must fail
 *   -DFREE_AFTER_UNLOCK  whoever deletes an item frees it after unlocking
 *                 it, not before (see delete_item); DISABLE still verifies
 *
 * scripts/checks/check-model runs all of these for 2 and 3 readers and 1 and 2
 * items and says what it expects of each.
 *
 * Processes
 *
 *   reader (NR)   epoll_wait -> [window] -> lock item -> stop set? delete
 *                 it (EPOLL_CTL_DEL, free, unlock) : read its data,
 *                 EPOLL_CTL_MOD, unlock.  Loops for ever; blocking in
 *                 epoll_wait is a valid end state.
 *   deleter       for each item: lock; stop = 1; then
 *                   DISABLE protocol: DISABLE == 0 -> DEL, free, unlock;
 *                                     EBUSY -> unlock (the owner deletes)
 *                   naive:            DEL, free, unlock
 *   wakeup        data arrives on an item: the file becomes readable and
 *                 ep_poll_callback() queues the item if it is armed.
 *   checker       runs once nothing else can move (timeout), and checks
 *                 the final state.
 *
 * Every syscall's kernel side is one atomic step (d_step) over the item's
 * kernel state and the ready list, as it is under ep->mtx and ep->lock:
 *
 *   ARMED      in the set, event bits set, not on the ready list
 *   READY      armed and on the ready list (the ready list is the set of
 *              READY items; epoll_wait may take any of them)
 *   DELIVERED  handed to one epoll_wait caller: oneshot cleared its bits
 *   DISABLED   disarmed and taken off the ready list by EPOLL_CTL_DISABLE
 *   REMOVED    EPOLL_CTL_DEL'd: no longer in the set
 *
 *   ep_poll_callback  ARMED -> READY; any other state: nothing
 *   epoll_wait        READY -> DELIVERED (blocks while nothing is READY)
 *   EPOLL_CTL_MOD     -> READY if the file has data, else ARMED
 *   EPOLL_CTL_DISABLE ARMED/READY -> DISABLED, 0; DELIVERED -> EBUSY
 *                     (the wrong kernel: -> DISABLED, 0); DISABLED ->
 *                     EALREADY; REMOVED -> ENOENT
 *   EPOLL_CTL_DEL     -> REMOVED (must be in the set)
 *
 * Properties
 *
 *   assertions, at the step where they could first go wrong:
 *     use after free  nobody takes an item's lock or reads its data once
 *                     it has been freed: assert(nfree[i] == 0) at each
 *                     touch (the thread that frees it unlocks it after:
 *                     see unlock below)
 *     double free     assert(nfree[i] < 2) when an item is freed
 *     protocol        DEL only of an item in the set, MOD only by the
 *                     thread that holds the event, unlock only by the holder
 *   invalid end states (pan's deadlock check): a thread blocked on an item
 *     mutex, or the deleting thread stuck, when nothing can move.  Only a
 *     reader blocked in epoll_wait is a valid end state.
 *   final state, asserted by the checker when nothing else can move:
 *     every item freed   assert(nfree[i] > 0) for each deleted item (with
 *                        the double free assertion: exactly once)
 *     nothing hangs      every readiness that happened before the deletion
 *                        decision (data arriving while stop was clear,
 *                        ghost owed[i]) was consumed by a reader, or the
 *                        item was freed: assert(!owed[i] || nfree[i] > 0)
 *
 * Why the liveness properties are end-state assertions and not LTL: every
 * run of this model is finite (a reader goes round its loop only for an
 * event, an event needs an arrival, arrivals are bounded by NW), so
 * "eventually freed / eventually consumed" holds on every run exactly if
 * it holds in every final state.  A final state is one where nothing can
 * move, which is what timeout detects.  That keeps the check a plain
 * safety search (-DSAFETY), without a never claim, and the finiteness
 * itself is checked by a non-progress-cycle search (-DNP, pan -l): the
 * model has no progress label, so any infinite run would be reported as a
 * non-progress cycle (a final state is not one).
 *
 * What the model does not cover: one epoll set, every item EPOLLONESHOT
 * (-EINVAL for other items is not modelled), maxevents == 1, the ready
 * list as an unordered set (a superset of the kernel's FIFO behaviour), no
 * ovflist/scan batches (the kernel's ep->mtx makes DISABLE and DEL atomic
 * with respect to a scan, which is what the atomic steps assume), no
 * EPOLLET distinction (oneshot makes both the same here), no nested epoll,
 * close() of the file, fork, or EPOLLEXCLUSIVE, and no memory model: the
 * item mutex is taken to order everything done under it.  It checks the
 * protocol against this abstraction of the kernel, not the C code.
 */

#ifndef NR
#define NR 2
#endif
#ifndef NI
#define NI 1
#endif
#ifndef ND
#define ND NI
#endif
#ifndef NW
#define NW (3 * NI)
#endif
#define MAXI 3		/* array size; items NI..MAXI-1 stay UNUSED */

#define EBUSY	16
#define ENOENT	2
#define EALREADY 114

mtype = { UNUSED, ARMED, READY, DELIVERED, DISABLED, REMOVED };

mtype kst[MAXI] = UNUSED;	/* kernel: the epitem's state */
bit data[MAXI];			/* the file has unread data */
byte lk[MAXI];			/* item mutex: 0 free, else holder _pid + 1 */
bit stop[MAXI];			/* user: the deleting thread wants it gone */
byte nfree[MAXI];		/* ghost: times the item was freed */
bit owed[MAXI];			/* ghost: readiness before stop, unconsumed */

/* Kernel: one atomic step per call */

inline ep_disable(i, r)
{
	d_step {
		if
		:: kst[i] == ARMED || kst[i] == READY ->
			kst[i] = DISABLED; r = 0
		:: kst[i] == DELIVERED ->
#ifdef WRONG_KERNEL
			kst[i] = DISABLED; r = 0
#else
			r = EBUSY
#endif
		:: kst[i] == DISABLED -> r = EALREADY
		:: kst[i] == REMOVED -> r = ENOENT
		fi;
		printf("@@ %d DISABLE item %d -> %d\n", _pid, i, r)
	}
}

inline ep_del(i)
{
	d_step {
		assert(kst[i] != REMOVED);	/* no DEL of a deleted item */
		kst[i] = REMOVED;
		printf("@@ %d DEL item %d\n", _pid, i)
	}
}

/* Called by the thread holding the event, with the item locked */
inline ep_mod(i)
{
	d_step {
		assert(kst[i] == DELIVERED);	/* only the holder re-arms */
		if
		:: data[i] -> kst[i] = READY
		:: else -> kst[i] = ARMED
		fi;
		printf("@@ %d MOD item %d (re-armed, %e)\n", _pid, i, kst[i])
	}
}

/* Data arrives on item i's file; ep_poll_callback() */
inline arrive(i)
{
	if
	:: nfree[i] == 0 ->
		data[i] = 1;
		owed[i] = owed[i] || !stop[i];
		if
		:: kst[i] == ARMED -> kst[i] = READY
		:: else
		fi;
		printf("@@ %d data on item %d (%e)\n", _pid, i, kst[i])
	:: else		/* freed: its owner closed the file */
	fi
}

/* User space */

inline lock(i)
{
	atomic {
		lk[i] == 0 ->
		printf("@@ %d lock item %d\n", _pid, i);
		assert(nfree[i] == 0);		/* use after free */
		lk[i] = _pid + 1
	}
}

/*
 * The mutex outlives the item's data (the selftest poisons a deleted item
 * instead of freeing it), so the deleting thread may free the item under
 * its lock and unlock after, as the protocol is written; a thread that
 * locks the item after that is the use after free.
 */
inline unlock(i)
{
	d_step {
		assert(lk[i] == _pid + 1);
		lk[i] = 0;
		printf("@@ %d unlock item %d\n", _pid, i)
	}
}

inline free_item(i)
{
	d_step {
		nfree[i]++;
		assert(nfree[i] < 2);		/* double free */
		printf("@@ %d free item %d\n", _pid, i)
	}
}

/*
 * Called with the item locked, by whoever may delete it: EPOLL_CTL_DEL,
 * free, unlock.  -DFREE_AFTER_UNLOCK frees it after the unlock instead, as
 * a program whose mutex is inside the item must: the DISABLE protocol
 * verifies either way, because nobody else can be waiting for the mutex.
 */
inline delete_item(i)
{
	ep_del(i);
#ifdef FREE_AFTER_UNLOCK
	unlock(i);
	free_item(i)
#else
	free_item(i);
	unlock(i)
#endif
}

proctype reader()
{
	byte i;

end_wait:
	do
	:: atomic {	/* epoll_wait(maxevents = 1) */
		kst[0] == READY || kst[1] == READY || kst[2] == READY ->
		if
		:: kst[0] == READY -> i = 0
		:: kst[1] == READY -> i = 1
		:: kst[2] == READY -> i = 2
		fi;
		kst[i] = DELIVERED;
		printf("@@ %d epoll_wait -> item %d\n", _pid, i)
	   }
		/* the window: the event is ours, the item is not locked yet */
		lock(i);
		if
		:: stop[i] ->		/* delete when done */
			delete_item(i)
		:: else ->
			d_step {	/* handle: read the data */
				assert(nfree[i] == 0);	/* use after free */
				data[i] = 0;
				owed[i] = 0;
				printf("@@ %d read item %d\n", _pid, i)
			}
			ep_mod(i);
			unlock(i)
		fi;
		i = 0
	od
}

proctype deleter()
{
	byte i, r;

	do
	:: i < ND ->
		lock(i);
		d_step {
			stop[i] = 1;
			printf("@@ %d stop item %d\n", _pid, i)
		}
#ifdef NAIVE
		delete_item(i);
#else
		ep_disable(i, r);
		if
		:: r == 0 ->
			delete_item(i)
		:: r == EBUSY ->	/* the event's holder deletes it */
			unlock(i)
		:: else ->
			assert(r == 0 || r == EBUSY)
		fi;
		r = 0;
#endif
		i++
	:: else -> break
	od
}

proctype wakeup()
{
	byte n, i;

	do
	:: n < NW ->
		atomic {
			select(i : 0 .. NI - 1);
			arrive(i);
			n++;
			i = 0
		}
	:: break
	od
}

proctype checker()
{
	byte i;

	timeout;	/* nothing else can move: the final state */
	d_step {
		for (i : 0 .. NI - 1) {
			assert(i >= ND || nfree[i] > 0);	/* freed */
			assert(!owed[i] || nfree[i] > 0)	/* no hang */
		}
		i = 0
	}
}

init
{
	byte i;

	d_step {
		for (i : 0 .. NI - 1) {
			kst[i] = ARMED		/* EPOLL_CTL_ADD, no data yet */
		}
		i = 0
	}
	atomic {
		for (i : 1 .. NR) {
			run reader()
		}
		run deleter();
		run wakeup();
		run checker();
		i = 0
	}
}
