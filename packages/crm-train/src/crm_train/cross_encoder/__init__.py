"""Training the cross-encoder kind (crm_core.cross_encoder): its config, examples, criteria noise, model set-up and
the Accelerate loop. crm-train runs it for configs without `kind: compositional`."""
