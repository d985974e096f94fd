"""The dataset a command uses when none is given: the bundled sample split."""

from __future__ import annotations

from pathlib import Path

DEFAULT_DATASET = Path("datasets") / "sample"
"""The sample's folder in a checkout (relative to the current directory or the repository)."""
PACKAGED_SAMPLE = Path("_datasets") / "sample"
"""The sample's folder inside the installed package (pyproject.toml package data)."""


def default_dataset() -> Path:
    """``datasets/sample`` relative to the current directory, else the sample shipped inside
    the package (``jobbench/_datasets/sample``: in a checkout, a symbolic link to the
    repository's ``datasets/sample``; in a wheel, a copy of it), else relative to the
    repository holding the installed package (``src/jobbench`` → repository root).

    Raises:
        FileNotFoundError: none exists (the message names the places).
    """
    here = Path.cwd() / DEFAULT_DATASET
    if here.is_dir():
        return here
    import jobbench

    packaged = (Path(jobbench.__file__).resolve().parent / PACKAGED_SAMPLE).resolve()
    if packaged.is_dir():
        return packaged
    repo = Path(jobbench.__file__).resolve().parents[2] / DEFAULT_DATASET
    if repo.is_dir():
        return repo
    raise FileNotFoundError(
        f"no dataset given and the bundled sample split was not found at {here}, "
        f"{packaged} or {repo}; pass a DATASET path"
    )
