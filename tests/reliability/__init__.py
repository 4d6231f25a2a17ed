"""Reliability tests: faults injected into real sessions, fuzzing, load (issue 9)."""
