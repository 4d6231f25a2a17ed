"""``seawall watch``: a running (or finished) session seen from any terminal, read from
the session's files alone (``rows``) and drawn with ``rich`` (``screen``)."""
