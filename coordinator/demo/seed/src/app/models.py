"""Domain models."""
