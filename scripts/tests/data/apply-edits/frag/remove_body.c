	/* removes the item */
	return 1;
