"""The channel kit: what every channel builds on, so that a channel is a small folder of
translation (Slack's Block Kit, the web's HTML, the terminal's lines) and nothing copied.

- ``factory``: ``role_people`` and ``implement_role``, behind every ``<channel>_channel(Role)``;
- ``catalog``: ``KitCatalog``, the typed read-only view of the assembly (roles, tools, what a
  role reads, ``binding_of``, a channel's own implementations);
- ``offers``: ``Offered`` / ``offered``, the answers a question takes (``allows_kind``);
- ``answerers``: who may answer a question, and the refusal's words;
- ``waiting``: ``waiting_for``, what waits for one person;
- ``outcomes``: how a question ended (a closed union) and the words said of it;
- ``grants``: "Approve and allow similar…" — the choices a question offers, a form read into a
  grant, approving and granting in one act, a grant on one line;
- ``texts``: every sentence said to a person.

The kit imports no channel (the import-linter's layers check it).
"""
