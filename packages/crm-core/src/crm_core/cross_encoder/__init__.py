"""The paper's CRM kind: a cross-encoder reading criteria, query and response(s) in one sequence (PyTorch or ONNX
Runtime; the GPU path). Retiring the kind means deleting this folder (and crm_train/cross_encoder); crm_core.loader
is the one place that names it."""
