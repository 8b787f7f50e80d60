"""Benchmarks: run each on its own (``python -m tests.benchmarks.<name>``); pytest skips them."""
