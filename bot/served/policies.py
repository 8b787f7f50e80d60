"""``COUNTERSIGN_POLICY``'s policy, imported and checked: each problem one line naming it."""

from __future__ import annotations

import importlib

from bot.components.specs import PolicySpec, spec_of
from bot.core.errors import SettingsError
from bot.core.field_errors import failure_text
from bot.served.targets import POLICY_SETTING, GraphTarget


def load_policy(target: GraphTarget | None) -> type | None:
    """The ``@policy`` class ``target`` names (None: no policy); a ``SettingsError`` naming
    ``COUNTERSIGN_POLICY`` when it cannot be imported or is no policy."""
    if target is None:
        return None
    try:
        module = importlib.import_module(target.module)
    except ImportError as error:
        missing = error.name if isinstance(error, ModuleNotFoundError) else None
        if missing is not None and (target.module + ".").startswith(f"{missing}."):
            raise SettingsError(
                f"{POLICY_SETTING}: the module {target.module} cannot be imported (no module "
                f"named {missing!r}): run from the folder that holds it, or add that folder to "
                "PYTHONPATH"
            ) from None
        raise SettingsError(_failed(target, error)) from None
    except Exception as error:  # the user's module raised while it was imported
        raise SettingsError(_failed(target, error)) from None
    found: object = module
    for part in target.attribute.split("."):
        found = getattr(found, part, None)
    if not isinstance(spec_of(found), PolicySpec):
        raise SettingsError(
            f"{POLICY_SETTING}: {target.text} is not a @policy class (decorate a class with "
            "@policy(name='...-policy', description=...) and a decide(self, ask) method, or "
            "use a built-in such as bot.approve_below(...))"
        )
    assert isinstance(found, type)
    return found


def _failed(target: GraphTarget, error: Exception) -> str:
    said = f"{POLICY_SETTING}: importing the module {target.module} failed: {failure_text(error)}"
    return said[:600]
