"""The one reader of a ``git`` command line.

``read_git`` splits an argv the way git's own ``handle_options`` does: the global
options before the subcommand (matched exactly, as git matches them: ``-C <dir>``,
``-c <name>=<value>``, ``--config-env[=]<name>=<var>``, ``--git-dir[=]<dir>``,
``--work-tree[=]<dir>``, ``--namespace[=]<name>``, ``--attr-source[=]<tree>``, and the
flags), then the subcommand and its arguments. Several ``-C`` combine, a relative one
read from the one before it. An option git does not know before the subcommand makes
git refuse to run; it is kept in ``unknown_global``.

After the subcommand, git's option parser accepts any unambiguous prefix of a long
option (``--har`` is ``--hard``, ``--forc`` is ``--force``, ``--amen`` is ``--amend``).
``canonical_args`` spells such prefixes out for the subcommands whose options decide
whether a call is destructive; an ambiguous prefix is read as the first (the most
destructive) option it could mean, so a reader never under-reads it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "GLOBAL_FLAGS",
    "GLOBAL_WITH_VALUE",
    "GitArgv",
    "canonical_args",
    "git_argv",
    "read_git",
]

GLOBAL_WITH_VALUE = frozenset(
    {
        "-C",
        "-c",
        "--config-env",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--attr-source",
        "--super-prefix",
    }
)
_ONLY_INLINE = frozenset({"--exec-path", "--list-cmds"})  # ``--opt=value`` (alone: a flag)
GLOBAL_FLAGS = frozenset(
    {
        "-p",
        "--paginate",
        "-P",
        "--no-pager",
        "--no-replace-objects",
        "--bare",
        "--literal-pathspecs",
        "--no-literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-optional-locks",
        "--no-lazy-fetch",
        "--no-advice",
        "--exec-path",
        "--html-path",
        "--man-path",
        "--info-path",
        "-h",
        "--help",
        "-v",
        "--version",
    }
)

# long options of the subcommands whose options matter, the destructive ones first
_LONG_OPTIONS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "push": (
            "--force", "--force-with-lease", "--force-if-includes", "--mirror", "--delete",
            "--prune", "--all", "--branches", "--tags", "--follow-tags", "--atomic",
            "--dry-run", "--porcelain", "--verbose", "--quiet", "--progress",
            "--set-upstream", "--signed", "--no-verify", "--verify", "--repo",
            "--receive-pack", "--exec", "--thin", "--no-thin", "--recurse-submodules",
            "--push-option", "--ipv4", "--ipv6", "--no-force-with-lease", "--no-signed",
        ),
        "reset": (
            "--hard", "--merge", "--keep", "--soft", "--mixed", "--quiet", "--no-quiet",
            "--pathspec-from-file", "--pathspec-file-nul", "--recurse-submodules",
            "--no-recurse-submodules", "--intent-to-add", "--refresh", "--no-refresh", "--patch",
        ),
        "commit": (
            "--amend", "--all", "--patch", "--reuse-message", "--reedit-message", "--fixup",
            "--squash", "--reset-author", "--short", "--branch", "--porcelain", "--long",
            "--null", "--file", "--author", "--date", "--message", "--template", "--signoff",
            "--no-signoff", "--trailer", "--no-verify", "--verify", "--allow-empty",
            "--allow-empty-message", "--cleanup", "--edit", "--no-edit", "--include",
            "--only", "--pathspec-from-file", "--pathspec-file-nul", "--untracked-files",
            "--verbose", "--quiet", "--dry-run", "--status", "--no-status", "--gpg-sign",
            "--no-gpg-sign", "--no-post-rewrite",
        ),
        "clean": ("--force", "--dry-run", "--quiet", "--exclude", "--interactive"),
        "checkout": (
            "--force", "--orphan", "--detach", "--merge", "--ours", "--theirs", "--track",
            "--no-track", "--guess", "--no-guess", "--overlay", "--no-overlay", "--quiet",
            "--progress", "--no-progress", "--conflict", "--patch",
            "--ignore-skip-worktree-bits", "--ignore-other-worktrees", "--recurse-submodules",
            "--no-recurse-submodules", "--pathspec-from-file", "--pathspec-file-nul",
            "--overwrite-ignore", "--no-overwrite-ignore",
        ),
        "branch": (
            "--force", "--delete", "--move", "--copy", "--list", "--all", "--remotes",
            "--show-current", "--verbose", "--quiet", "--track", "--no-track",
            "--set-upstream-to", "--unset-upstream", "--edit-description", "--contains",
            "--no-contains", "--merged", "--no-merged", "--sort", "--points-at", "--format",
            "--column", "--no-column", "--color", "--no-color", "--create-reflog",
            "--recurse-submodules", "--abbrev", "--no-abbrev", "--ignore-case", "--omit-empty",
        ),
        "read-tree": (
            "-u", "--reset", "--prefix", "--index-output", "--trivial", "--aggressive",
            "--dry-run", "--no-sparse-checkout", "--empty", "--quiet", "--exclude-per-directory",
            "--recurse-submodules",
        ),
        "stash": ("--keep-index", "--include-untracked", "--all", "--quiet", "--patch",
                  "--staged", "--message", "--pathspec-from-file", "--pathspec-file-nul"),
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class GitArgv:
    """One ``git`` argv, split the way git splits it.

    ``directory`` is the combined ``-C`` value; ``config`` holds every ``-c`` value
    and ``--config-env`` value (each can run a command: ``core.pager``,
    ``core.fsmonitor``, ``diff.external``, ``alias.*``); ``global_options`` names the
    global options given, in order.
    """

    subcommand: str | None
    args: tuple[str, ...]
    directory: str | None = None
    git_dir: str | None = None
    work_tree: str | None = None
    config: tuple[str, ...] = ()
    global_options: tuple[str, ...] = ()
    unknown_global: str | None = None
    missing_value: bool = False  # a global option's value is missing: git refuses to run

    @property
    def changes_directory(self) -> bool:
        """True when the call acts on a repository or tree other than the working one."""
        return bool({"-C", "--git-dir", "--work-tree"} & set(self.global_options))

    def argv(self) -> tuple[str, ...]:
        """``git SUBCOMMAND ARGS...`` without the global options."""
        return ("git", self.subcommand, *self.args) if self.subcommand else ("git",)


def read_git(argv: Sequence[str]) -> GitArgv:
    """Split ``argv`` (``argv[0]`` is the git program) into global options and the rest."""
    seen: list[str] = []
    config: list[str] = []
    values: dict[str, str] = {}
    index = 1
    while index < len(argv):
        word = argv[index]
        if not word.startswith("-") or word == "-":
            break
        if word == "--":
            index += 1
            break
        name, eq, inline = word.partition("=")
        if word in GLOBAL_FLAGS:
            seen.append(word)
            index += 1
            continue
        if name in _ONLY_INLINE and eq:
            seen.append(name)
            index += 1
            continue
        if name in GLOBAL_WITH_VALUE and (eq or word == name):
            if name in ("-C", "-c") and eq:
                return _unknown(argv, index, seen, config, values)
            if not eq:
                if index + 1 >= len(argv):
                    return GitArgv(
                        subcommand=None,
                        args=(),
                        global_options=(*seen, name),
                        config=tuple(config),
                        missing_value=True,
                    )
                inline = argv[index + 1]
                index += 1
            seen.append(name)
            if name in ("-c", "--config-env"):
                config.append(inline)
            elif name == "-C":
                base = values.get("-C")
                joined = inline if base is None or inline.startswith("/") else f"{base}/{inline}"
                values["-C"] = joined
            else:
                values[name] = inline
            index += 1
            continue
        return _unknown(argv, index, seen, config, values)
    subcommand = argv[index] if index < len(argv) else None
    return GitArgv(
        subcommand=subcommand,
        args=tuple(argv[index + 1 :]),
        directory=values.get("-C"),
        git_dir=values.get("--git-dir"),
        work_tree=values.get("--work-tree"),
        config=tuple(config),
        global_options=tuple(seen),
    )


def _unknown(
    argv: Sequence[str], index: int, seen: list[str], config: list[str], values: dict[str, str]
) -> GitArgv:
    rest = argv[index + 1 :]
    return GitArgv(
        subcommand=rest[0] if rest else None,
        args=tuple(rest[1:]),
        directory=values.get("-C"),
        git_dir=values.get("--git-dir"),
        work_tree=values.get("--work-tree"),
        config=tuple(config),
        global_options=tuple(seen),
        unknown_global=argv[index],
    )


def canonical_args(subcommand: str, args: Sequence[str]) -> tuple[str, ...]:
    """``args`` with every long-option prefix written out as the option git reads.

    ``--`` ends the options; values after ``=`` are kept (``--forc=x`` ->
    ``--force=x``). Subcommands not in the table are returned unchanged.
    """
    known = _LONG_OPTIONS.get(subcommand)
    if not known:
        return tuple(args)
    out: list[str] = []
    for position, arg in enumerate(args):
        if arg == "--":
            out.extend(args[position:])
            break
        if not arg.startswith("--") or len(arg) == 2:
            out.append(arg)
            continue
        name, eq, value = arg.partition("=")
        full = _expand(name, known)
        out.append(full + eq + value)
    return tuple(out)


def _expand(name: str, known: tuple[str, ...]) -> str:
    if name in known:
        return name
    matches = [option for option in known if option.startswith(name)]
    if matches:
        return matches[0]
    if name.startswith("--no-"):  # ``--no-<prefix>`` negates the option it abbreviates
        positive = _expand("--" + name.removeprefix("--no-"), known)
        return "--no-" + positive.removeprefix("--") if positive in known else name
    return name


def git_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """``git`` argv without its global options, long-option prefixes written out:
    ``git -C x -c a=b push --forc`` -> ``git push --force``."""
    read = read_git(argv)
    if read.subcommand is None:
        return ("git",)
    return ("git", read.subcommand, *canonical_args(read.subcommand, read.args))
