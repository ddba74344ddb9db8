			error = 0;
