"""What a session tells the outside world when it ends: the pull/merge request that
publishes its branch, and the webhook told about trips, halts and the end."""
