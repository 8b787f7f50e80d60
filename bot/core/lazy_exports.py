"""A package's public names imported on first use (PEP 562), so importing the package stays
cheap: ``python -m bot --help`` and the settings check run before LangGraph, LangChain or Bolt
load."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence


def lazy_exports(
    package: str, exported_from: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The package's ``__getattr__`` and ``__dir__``: a name of ``exported_from`` is imported
    from its module when first read and kept in the package's namespace."""

    def __getattr__(name: str) -> object:
        module = exported_from.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *public})

    return __getattr__, __dir__
