"""Configuration: one validator for plan files and the unattended runner's settings.

``fields`` converts TOML tables (and environment variables) into the frozen config
dataclasses, with errors naming the field and suggesting the nearest known key;
``lines`` finds the line of a field in a TOML text, so errors also name the line.
"""

from seawall.config.fields import (
    FieldError,
    Rule,
    build,
    check_keys,
    convert,
    field_values,
    ruled,
    suggest,
)
from seawall.config.lines import field_line, table_element

__all__ = [
    "FieldError",
    "Rule",
    "build",
    "check_keys",
    "convert",
    "field_line",
    "field_values",
    "ruled",
    "suggest",
    "table_element",
]
