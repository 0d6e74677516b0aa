"""Hugging Face Space entry point: the USL app on the CRM shipped beside this file (models/crm-compositional).

The model is found next to app.py (a Space's root), else at $USL_MODEL; on first start the app downloads the
public AlpacaEval responses of the default models (progress in the logs). Set USL_DATA to a bench or
AlpacaEval-style folder to run offline (several, separated by the path separator ":", for a bench picker).
"""

import os
from pathlib import Path

from usl_space.app import main

HERE = Path(__file__).resolve().parent


def arguments(environ=os.environ) -> list[str]:
    """usl-space's arguments for this Space: host and port, the model beside app.py, the data when given."""
    args = ["--host", environ.get("USL_HOST", "0.0.0.0"), "--port", environ.get("PORT", "7860")]
    model = environ.get("USL_MODEL") or HERE / "models" / "crm-compositional"  # a folder or a Hub repo id
    if environ.get("USL_MODEL") or Path(model).is_dir():
        args += ["--model", str(model)]
    for folder in filter(None, environ.get("USL_DATA", "").split(os.pathsep)):  # several: one page per bench
        args += ["--data", folder]
    return args


if __name__ == "__main__":
    raise SystemExit(main(arguments()))
