"""Training of the compositional CRM: its data sources, phrasing bank, property pairs, and the fit of its heads."""
