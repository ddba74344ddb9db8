	WARN_ON_ONCE(ep->ovflist != EP_UNACTIVE_PTR);
