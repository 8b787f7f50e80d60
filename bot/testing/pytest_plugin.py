"""Registered as a pytest plugin: scripted models and mocks never leak from one test to the next."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.runtime.model_overrides import clear_overrides


@pytest.fixture(autouse=True)
def _countersign_clear_overrides() -> Iterator[None]:
    clear_overrides()
    yield
    clear_overrides()
