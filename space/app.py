"""Hugging Face Space entry point: the USL app on the shipped CRM (space/models/crm-compositional).

On first start it downloads the public AlpacaEval responses of the default models (progress in the logs);
set USL_DATA to a bench or AlpacaEval-style folder to run offline.
"""

import os

from usl_space.app import main

if __name__ == "__main__":
    args = ["--host", "0.0.0.0", "--port", os.environ.get("PORT", "7860")]
    if os.environ.get("USL_DATA"):
        args += ["--data", os.environ["USL_DATA"]]
    raise SystemExit(main(args))
