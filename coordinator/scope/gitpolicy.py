"""What a dispatched agent may do with git: read.

The repository's index, refs, stash, configuration and remotes are shared by every
agent of a wave and by the coordinator, which records each agent's work on its own refs
and merges it. So, for an agent:

- global options that point git at another repository or tree, or change its
  configuration (``-C``, ``-c``, ``--config-env``, ``--git-dir``, ``--work-tree``,
  ``--namespace``, ``--exec-path=``, ``--attr-source``), and ``GIT_*`` variables, are
  refused: ``-c core.pager=...``, ``core.fsmonitor``, ``diff.external`` run commands;
- ref plumbing (``update-ref``, ``symbolic-ref NAME REF``, ``branch -f``,
  ``read-tree -u``, ``checkout-index``, ``reflog expire|delete``, ``filter-branch``,
  ``submodule foreach``, ``bisect run``, ``replace``, ``update-index`` ...) is refused;
- every other write (``add``, ``commit``, ``stash``, ``push``, ``reset``,
  ``checkout``, ``restore``, ``rm``, ``mv``, ``clean``, ``switch``, ``merge``, ...) is
  refused with the reason;
- the read-only subcommands (``status``, ``diff``, ``log``, ``show``, ``grep``,
  ``blame``, listing forms of ``branch``/``tag``/``stash``/``remote``/``config`` ...)
  are allowed; a subcommand git itself would not know (an alias, an extension) is
  unknown.

Options are read the way git reads them (``seawall.shell.gitargv``): ``--forc``
is ``--force``.
"""

from __future__ import annotations

from seawall.scope.programs import asks_for_help
from seawall.shell import SimpleCommand
from seawall.shell.gitargv import canonical_args, read_git

__all__ = ["READ_ONLY", "REF_PLUMBING", "git_refusal"]

READ_ONLY = frozenset(
    {
        "status", "diff", "log", "show", "blame", "annotate", "grep", "ls-files", "ls-tree",
        "cat-file", "rev-parse", "rev-list", "describe", "shortlog", "whatchanged",
        "show-ref", "for-each-ref", "name-rev", "merge-base", "diff-tree", "diff-index",
        "diff-files", "count-objects", "var", "version", "help", "check-ignore",
        "check-attr", "check-ref-format", "cherry", "range-diff", "ls-remote", "fsck",
        "verify-commit", "verify-tag", "show-branch", "get-tar-commit-id",
    }
)  # fmt: skip
REF_PLUMBING = frozenset(
    {
        "update-ref", "checkout-index", "filter-branch", "filter-repo", "replace",
        "update-index", "update-server-info", "pack-refs", "fast-import", "hash-object",
        "commit-tree", "mktree", "mktag", "write-tree", "unpack-objects", "prune",
        "prune-packed", "gc", "repack", "reflog", "symbolic-ref", "read-tree",
        "submodule", "bisect", "worktree", "notes", "config", "remote", "lfs",
        "sparse-checkout", "maintenance",
    }
)  # fmt: skip
_REFUSED_GLOBALS = frozenset(
    {
        "-C", "-c", "--config-env", "--git-dir", "--work-tree", "--namespace", "--exec-path",
        "--attr-source", "--super-prefix", "--list-cmds",
    }
)  # fmt: skip
_WRITE_REASON = (
    "a dispatched agent does not write git state (index, refs, stash, remotes): the "
    "coordinator records and merges this task's files itself"
)


def git_refusal(cmd: SimpleCommand) -> tuple[bool, str] | None:
    """Why an agent may not run the git call ``cmd``: ``(unknown, reason)``, or None.

    ``unknown`` is true when what the call does cannot be known (an option or a
    subcommand git would not recognise, one named by an expansion).
    """
    assigned = [a.split("=", 1)[0] for a in cmd.assignments if a.startswith("GIT_")]
    if assigned:
        return False, f"{assigned[0]} points git at other state; agents may not set GIT_*"
    read = read_git(cmd.argv)
    refused = [o for o in read.global_options if o in _REFUSED_GLOBALS]
    if refused:
        return False, f"git {refused[0]} changes the repository or configuration git acts on"
    if read.unknown_global is not None:
        return True, f"git does not know the option {read.unknown_global!r}"
    if read.subcommand is None:
        return None
    index = len(cmd.argv) - len(read.args) - 1
    if cmd.dynamic and any(cmd.dynamic[1 : index + 1]):
        return True, "the git subcommand is not known before it runs"
    sub = read.subcommand
    args = canonical_args(sub, read.args)
    if _reads(sub, args) or asks_for_help(read.args):
        return None
    if sub in REF_PLUMBING or _plumbing_form(sub, args):
        return False, f"git {sub} rewrites refs or repository state directly"
    if sub in _WRITES:
        return False, f"git {sub}: {_WRITE_REASON}"
    return True, f"git {sub!r} is not a git command seawall knows"


_WRITES = frozenset(
    {
        "add", "commit", "stash", "push", "reset", "checkout", "restore", "rm", "mv",
        "clean", "switch", "merge", "rebase", "pull", "fetch", "cherry-pick", "revert",
        "am", "apply", "tag", "branch", "init", "clone", "format-patch", "archive",
        "bundle", "mergetool", "citool", "gui", "stage", "rerere", "send-email",
    }
)  # fmt: skip
_BRANCH_LIST = frozenset(
    {"--list", "-l", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose",
     "--show-current", "--contains", "--no-contains", "--merged", "--no-merged",
     "--points-at", "--sort", "--format", "--column", "--no-column", "--color",
     "--no-color", "--abbrev", "--no-abbrev", "--ignore-case", "--omit-empty", "-q",
     "--quiet"}
)  # fmt: skip


_BRANCH_LISTS_WITH_OPERANDS = frozenset(
    {"--list", "-l", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"}
)


def _reads(sub: str, args: tuple[str, ...]) -> bool:
    """Whether ``git SUB ARGS`` only reads."""
    if sub in READ_ONLY:
        return not _writes_anyway(sub, args)
    options = [a for a in args if a.startswith("-")]
    operands = [a for a in args if not a.startswith("-")]
    if sub == "branch":
        names = {a.split("=", 1)[0] for a in options}
        if not names <= _BRANCH_LIST:
            return False
        return not operands or bool(names & _BRANCH_LISTS_WITH_OPERANDS)
    if sub == "tag":
        return not operands or bool({"-l", "--list"} & set(options))
    if sub == "clean":
        short = {c for o in options if not o.startswith("--") for c in o[1:]}
        return ("n" in short or "--dry-run" in options) and "f" not in short
    if sub == "apply":
        return bool({"--check", "--stat", "--numstat", "--summary"} & set(options))
    if sub == "stash":
        return bool(operands) and operands[0] in ("list", "show")
    if sub == "remote":
        return not operands or operands[0] in ("show", "get-url")
    if sub == "worktree" or sub == "notes":
        return bool(operands) and operands[0] in ("list", "show")
    if sub == "reflog":
        return not operands or operands[0] == "show"
    if sub == "config":
        readers = {"--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch"}
        return bool(readers & set(options)) or (bool(operands) and operands[0] in ("get", "list"))
    if sub == "symbolic-ref":
        return len(operands) == 1 and "-d" not in options and "--delete" not in options
    if sub == "submodule":
        return not operands or operands[0] in ("status", "summary")
    return False


def _writes_anyway(sub: str, args: tuple[str, ...]) -> bool:
    """A reading subcommand told to write a file or run a program."""
    if any(a.startswith(("--output", "--ext-diff")) for a in args):
        return True  # ``--output=FILE`` of the diff family; an external diff program
    if sub == "grep" and any(a.startswith(("-O", "--open-files-in-pager")) for a in args):
        return True  # runs the pager it names
    return sub == "fsck" and any(a.startswith("--lost") for a in args)


def _plumbing_form(sub: str, args: tuple[str, ...]) -> bool:
    """``branch -f``/``-D``/``-M`` and ``checkout -B``: a ref moved or deleted outright."""
    flags = {a for a in args if a.startswith("-")}
    if sub == "branch":
        short = {c for a in flags if not a.startswith("--") for c in a[1:]}
        return bool({"f", "D", "M", "C"} & short) or bool({"--force", "--delete"} & flags)
    return sub == "checkout" and bool({"-B", "--force"} & flags)
