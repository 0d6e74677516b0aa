"""crm_train: training and evaluation of Customizable Reward Models."""
