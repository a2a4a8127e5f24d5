"""The FastAPI implementation of the showdown contract (workloads/README.md)."""
