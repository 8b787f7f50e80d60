"""Your own LangGraph agent, served: ``COUNTERSIGN_GRAPH=my_agent:graph python -m bot serve``.

A graph named by its import path (``graphs``) is served by an application of roles alone,
made for it (``application``: one role per tool it asks about, whose model is that tool's own
arguments, so what the approver is shown is what is checked), in Slack or on the web desk
(``server``). ``serve_graph(graph, ...)`` is the same in code. Only the command line and the
public ``bot.serve_graph`` import it; no library package does.
"""
