"""Agent runner adapters."""
