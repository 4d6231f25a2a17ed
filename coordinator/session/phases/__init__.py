"""The phases of one wave, one module each, in the order ``seawall.session.loop``
runs them: ``planning`` (the next wave), ``prepare``, ``dispatch`` (with the salvage of
agents that never reported), ``review`` (with the settling of an in-place tree),
``merge``, ``recover``; ``finish`` ends the session. Step mode
(``seawall.session.step_mode``) runs the same phases with a lead agent dispatching.
Each phase takes a ``WaveContext`` and ends with the ledger saved.
"""
