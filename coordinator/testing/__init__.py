"""Public test kits: conformance suites for third-party adapters."""
