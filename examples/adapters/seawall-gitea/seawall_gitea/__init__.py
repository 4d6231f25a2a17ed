"""seawall-gitea: a Gitea / Forgejo tracker for seawall carryover issues."""

from seawall_gitea.tracker import GiteaTracker

__all__ = ["GiteaTracker"]
