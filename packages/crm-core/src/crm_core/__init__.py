"""crm_core: the Customizable Reward Model core library."""
