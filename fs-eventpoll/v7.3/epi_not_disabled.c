	epi->disabled = false;
