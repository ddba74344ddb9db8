	return -EBUSY;
