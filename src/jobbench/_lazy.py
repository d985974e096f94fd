"""Lazy public attributes for a package (PEP 562).

A package whose public API pulls heavy dependencies (openai, matplotlib, numpy) lists its
names here instead of importing them, so ``jobbench --help`` and unrelated commands start
fast; each name is imported on first use and then cached in the package's globals.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_attributes(
    package: str, names: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Build ``__getattr__`` and ``__dir__`` for ``package``.

    Args:
        package: the package's ``__name__``.
        names: public name → relative module that defines it (``"grade_run": "._run"``).

    Returns:
        ``(__getattr__, __dir__)`` to assign at module level.

    Raises (from ``__getattr__``):
        AttributeError: for a name not in ``names``.
    """
    import sys

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
