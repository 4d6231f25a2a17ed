"""seawall: run a coding session as waves of coding agents."""
