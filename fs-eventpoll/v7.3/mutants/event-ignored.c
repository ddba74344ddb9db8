	return false;
