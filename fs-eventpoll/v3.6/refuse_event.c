	error = -EINVAL;
	if (ep_op_refuses_event(op) && event)
		goto error_return;

