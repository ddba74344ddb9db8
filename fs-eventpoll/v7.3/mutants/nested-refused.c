
	if (is_file_epoll(epi->ffd.file))
		return -EINVAL;
