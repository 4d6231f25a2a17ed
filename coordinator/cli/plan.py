"""Placeholder: this command group is registered by its own module."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this group's commands (none yet)."""
