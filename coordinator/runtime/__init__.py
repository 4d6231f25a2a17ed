"""Runtime support the whole engine shares: atomic files and locks, ending process groups,
and the fault-injection hook the crash-recovery tests arm."""
