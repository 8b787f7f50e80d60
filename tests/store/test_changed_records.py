"""``records.changed``: a pause record with some fields changed, the same as
``dataclasses.replace`` makes it, field by field."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.core.enums import PauseResolution, PauseStatus
from bot.store.records import PauseRecord, changed
from tests.store.test_recent_pauses import record

CHANGES: list[dict[str, Any]] = [
    {},
    {"is_sent": True},
    {"status": PauseStatus.TAKEN},
    {"tool_result": "paid"},
    {"resolution": PauseResolution.DECIDED, "resolved_at": datetime(2026, 1, 1, tzinfo=UTC)},
    {"row_version": None},
]


@pytest.mark.parametrize("changes", CHANGES)
def test_changed_is_replace(changes: dict[str, Any]) -> None:
    before = record("a")
    made, replaced = changed(before, **changes), dataclasses.replace(before, **changes)
    for f in dataclasses.fields(PauseRecord):
        assert getattr(made, f.name) == getattr(replaced, f.name), f.name
    assert made.row_version == replaced.row_version
    assert type(made) is PauseRecord and made is not before


def test_a_field_a_record_does_not_have_is_refused() -> None:
    with pytest.raises(TypeError, match="colour"):
        changed(record("a"), colour="red")
