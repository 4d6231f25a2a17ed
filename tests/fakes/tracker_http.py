"""The HTTP fake machinery, from its public home in ``coordinator.testing.http``."""

from coordinator.testing.http import (
    Answer,
    FakeServer,
    FakeService,
    Fault,
    LoggedRequest,
    Request,
)

__all__ = ["Answer", "FakeServer", "FakeService", "Fault", "LoggedRequest", "Request"]
