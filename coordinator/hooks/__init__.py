"""Claude Code hook entry points: ``seawall hook pre-tool-use|post-tool-use|subagent-stop``.

Each handler takes the documented hook JSON (already parsed) and the environment, and
returns a ``HookResponse``: the exit code, stdout (the documented JSON decision) and
stderr. Nothing heavy is imported here: these run once per tool call.
"""
