"""The conformance suite's rules: a test needing a capability its channel's driver lacks is
skipped with the driver's reason (before the driver is built); a test its channel's class
lists in ``differences`` is a strict xfail."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from tests.conformance.driver import Capability


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    checked: set[type] = set()
    for item in items:
        cls = getattr(item, "cls", None)
        differences: Mapping[str, str] = getattr(cls, "differences", {})
        if cls is not None and cls not in checked:
            checked.add(cls)
            _check_names(cls, differences)
        reason = differences.get(getattr(item, "originalname", item.name))
        if reason is not None:
            item.add_marker(pytest.mark.xfail(strict=True, reason=reason))


def _check_names(cls: type, differences: Mapping[str, str]) -> None:
    """A difference names a test of the suite: one left behind by a rename would mark nothing."""
    stale = [name for name in differences if not callable(getattr(cls, name, None))]
    if stale:
        raise pytest.UsageError(f"{cls.__name__}.differences names no test: {', '.join(stale)}")


@pytest.fixture(autouse=True)
def _skip_what_the_channel_cannot(request: pytest.FixtureRequest) -> None:
    marker = request.node.get_closest_marker("requires")
    driver_type = getattr(request.cls, "driver_type", None)
    if marker is None or driver_type is None:
        return
    for needed in marker.args:
        assert isinstance(needed, Capability)
        if needed not in driver_type.capabilities:
            reason = driver_type.missing.get(needed, needed.value)
            pytest.skip(f"{driver_type.name}: {reason}")
