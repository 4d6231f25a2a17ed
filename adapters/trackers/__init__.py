"""Issue tracker adapters."""
