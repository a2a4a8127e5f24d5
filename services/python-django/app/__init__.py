"""The Django implementation of the showdown contract (workloads/README.md)."""
