"""Implementations of the core ports: issue trackers and agent runners."""
