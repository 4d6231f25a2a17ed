"""Prompt templates shipped as data files, and a strict renderer for them.

Each template is a ``NAME.txt`` file in this package with ``${name}`` placeholders
(``string.Template`` syntax; a literal dollar sign is written ``$$``). Rendering is
strict: a placeholder without a value is an error naming it, and so is a value that no
placeholder uses. Values are inserted once, never re-expanded, so task text containing
``${...}`` is safe.

``seawall.errors`` is imported inside the functions: ``seawall`` re-exports
renderers that import this package, and a module-level import here would make
``import prompts`` (before ``seawall``) circular.
"""

from __future__ import annotations

from importlib import resources
from string import Template

__all__ = ["load_template", "render", "template_names"]

_SUFFIX = ".txt"


def template_names() -> tuple[str, ...]:
    """The names of the templates this package ships, sorted."""
    return tuple(
        sorted(
            entry.name.removesuffix(_SUFFIX)
            for entry in resources.files(__name__).iterdir()
            if entry.is_file() and entry.name.endswith(_SUFFIX)
        )
    )


def load_template(name: str) -> str:
    """The raw text of template ``name`` (without ``.txt``); unknown names are an error."""
    from seawall.errors import ConfigurationError

    known = template_names()
    if name not in known:
        raise ConfigurationError(f"unknown prompt template {name!r}; templates: {', '.join(known)}")
    return resources.files(__name__).joinpath(name + _SUFFIX).read_text(encoding="utf-8")


def render(name: str, /, **variables: str) -> str:
    """Template ``name`` with every placeholder replaced by its value, strictly.

    Raises ``ConfigurationError`` when a placeholder has no value, a value has no
    placeholder, a value is not a string, or the template itself is malformed.
    """
    from seawall.errors import ConfigurationError

    template = Template(load_template(name))
    if not template.is_valid():
        raise ConfigurationError(f"prompt template {name!r} has an invalid '$' placeholder")
    wanted = set(template.get_identifiers())
    missing = sorted(wanted - variables.keys())
    if missing:
        raise ConfigurationError(
            f"prompt template {name!r} needs a value for: {', '.join(missing)}"
        )
    unused = sorted(variables.keys() - wanted)
    if unused:
        raise ConfigurationError(
            f"prompt template {name!r} has no placeholder for: {', '.join(unused)}"
        )
    for key, value in variables.items():
        if not isinstance(value, str):
            raise ConfigurationError(
                f"prompt variable {key!r} must be a string; got {type(value).__name__}"
            )
    return template.substitute(variables)
