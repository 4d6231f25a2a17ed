"""The OS sandbox and supervisor every agent process runs under.

``policy.SandboxPolicy`` says what one agent may write (``workspace_policy`` for a
worktree, ``scope_policy`` for an agent working in place); ``launch.supervisor_argv``
wraps an agent's command line in the supervisor (``supervise``), which applies the
policy with Landlock (``landlock``) and ends every process the agent started when it
stops; ``launch.available`` says whether this kernel can enforce a policy.

This ``__init__`` imports nothing: the supervisor starts with every agent and loads
only what it uses.
"""
