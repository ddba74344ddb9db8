
	/* Disarmed by ep_disable(), until ep_modify(); protected by ep->mtx */
	bool disabled;
