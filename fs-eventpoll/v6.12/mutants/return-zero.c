		return 0;
