"""usl-space-bundle: assemble a Hugging Face Space folder that deploys as it is, from a checkout of this repository.

    uv run usl-space-bundle --output dist/space

The folder holds app.py (finds its model beside itself), README.md (the Space's front matter), models/ (the shipped
compositional CRM), wheels/ (crm-core and usl-space, built from this checkout), requirements.txt (exported from
uv.lock, then the two wheels; what the Space's pip installs) and pylock.toml (the same set with URLs and hashes, for
`uv pip install -r pylock.toml`, which also installs offline from uv's cache). Nothing from the AlpacaEval data is
copied (CC BY-NC): the Space downloads it at its first start, or reads USL_DATA.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from crm_core.atomic import atomic_dir
from crm_core.guard import check_output, fail
from crm_core.hub import upload_files

SHIPPED = "crm-compositional"


def checkout_root(start: Path | None = None) -> Path:
    """The repository the command runs in: the nearest folder above `start` with space/app.py and uv.lock."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "space" / "app.py").is_file() and (folder / "uv.lock").is_file():
            return folder
    raise FileNotFoundError(f"{here}: not inside a USL checkout (no space/app.py and uv.lock above it)")


def _uv(root: Path, *args: str) -> str:
    uv = shutil.which("uv")
    if uv is None:
        raise FileNotFoundError("uv is not on PATH (pip install uv)")
    done = subprocess.run([uv, *args], cwd=root, capture_output=True, text=True)
    if done.returncode:
        raise ValueError(f"uv {' '.join(args[:2])} failed: {done.stderr.strip().splitlines()[-1:]}")
    return done.stdout


EXPORT = ("export", "--no-dev", "--no-emit-workspace", "--frozen", "--package", "usl-space")


def requirements_text(root: Path, wheels: list[str]) -> str:
    """requirements.txt of the Space: every pinned dependency from uv.lock, then the project's own wheels (the
    same file is kept as space/requirements.txt; a test checks it against uv.lock)."""
    pinned = _uv(root, *EXPORT, "--no-hashes", "--no-header", "--no-annotate")
    return ("# Exported from uv.lock (uv export --no-dev --no-emit-workspace --frozen --package usl-space), then the\n"
            "# project's own packages as wheels: uv run usl-space-bundle --output DIR builds them beside this file.\n"
            + pinned + "".join(f"./wheels/{name}\n" for name in wheels))  # fmt: skip


def bundle(output: Path, model: Path | None = None, root: Path | None = None) -> Path:
    """Write the Space folder to `output` (replaced whole when a bundle made it) and return it."""
    root = root or checkout_root()
    model = model or root / "space" / "models" / SHIPPED
    if not (model / "crm.json").is_file():
        raise FileNotFoundError(f"{model}: not a CRM folder (no crm.json)")
    check_output(output, {"--model": model, "the checkout's space/": root / "space"}, folder=True)
    files, _ = upload_files(model)  # what a checkpoint is made of: no pickles, dotfiles or links ship
    if not any(p.suffix in (".safetensors", ".onnx") for p in files):
        raise ValueError(f"{model}: no *.safetensors or *.onnx weights; pickled weights (.bin, .pt) are never shipped")
    with atomic_dir(output) as tmp:
        shutil.copy2(root / "space" / "app.py", tmp / "app.py")
        shutil.copy2(root / "space" / "README.md", tmp / "README.md")
        for relative in files:
            (tmp / "models" / SHIPPED / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(model / relative, tmp / "models" / SHIPPED / relative)
        for package in ("crm-core", "usl-space"):
            _uv(root, "build", "--wheel", "--package", package, "--out-dir", str(tmp / "wheels"), "--offline")
        wheels = sorted(p.name for p in (tmp / "wheels").glob("*.whl"))
        (tmp / "wheels" / ".gitignore").unlink(missing_ok=True)
        (tmp / "requirements.txt").write_text(requirements_text(root, wheels), encoding="utf-8")
        (tmp / "pylock.toml").write_text(_uv(root, *EXPORT, "--format", "pylock.toml"), encoding="utf-8")
    return output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="usl-space-bundle", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--output", required=True, metavar="DIR", help="the Space folder to write (a new or empty "
                        "folder, or one this command wrote before)")  # fmt: skip
    parser.add_argument("--model", metavar="DIR", help=f"the CRM to ship (default: space/models/{SHIPPED})")
    args = parser.parse_args(argv)
    try:
        folder = bundle(Path(args.output), Path(args.model) if args.model else None)
    except Exception as error:  # an expected error becomes one line; a bug stays a traceback
        return fail("usl-space-bundle", error, 2)
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "models" not in p.parts)
    print("\n".join(["wrote " + str(folder), *files, f"models/{SHIPPED}/ (the CRM)"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
