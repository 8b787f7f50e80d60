"""What a question's page offers: the kit's ``Offered`` (only the answers its asker takes).

The page shows a form for each answer offered, and the server refuses a post for any other (a
forged form) before anything is read or answered; the runtime checks it again.
"""

from __future__ import annotations

from channels.kit.offers import ACTIONS, Action, Offered, action_of, not_offered, offered

__all__ = ["ACTIONS", "Action", "Offered", "action_of", "not_offered", "offered"]
