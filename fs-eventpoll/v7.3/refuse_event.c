	if (ep_op_refuses_event(op) && event)
		return -EINVAL;
