			error = -EINVAL;
