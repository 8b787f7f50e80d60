"""The pause runtime on LangGraph: assembly, launches, the pause seam, answers, leases, sweeps."""
