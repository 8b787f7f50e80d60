"""The office desk: the sample application ``python -m bot`` serves and demonstrates.

An application built on the library like any user's (``office``: its tools and workflow;
``slack``: its Slack channels and settings; ``offline_model``: a scripted model that needs no
provider). Only the command line imports it; no library package does (checked in CI).
"""
