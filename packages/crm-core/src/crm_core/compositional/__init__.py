"""The compositional CRM kind (the default): quality + measured properties x weights read from the criteria + voice,
so a bench's response side is computed once and any criteria set ranks it by arithmetic. Retiring the kind means
deleting this folder (and crm_train/compositional); crm_core.loader is the one place that names it."""
