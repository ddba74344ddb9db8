		return events & ~EP_PRIVATE_BITS ? -EINVAL : -EBUSY;
