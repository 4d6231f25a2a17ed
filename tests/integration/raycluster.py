"""A two-node Ray cluster on loopback for the cluster tests (not a test module).

The head (127.0.0.3, label pool=head, resource ``head``) and a second raylet (127.0.0.2,
label pool=second, resource ``second``) run with token authentication, as Ray 2.60 does
by default (a token of the test's own, never the user's ``~/.ray/auth_token``).
127.0.0.1 itself is not used: Ray rewrites it to the machine's network address. Only
this cluster's processes are stopped (found by its temporary directory or port).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["HEAD", "Cluster", "raylet_of", "reload_auth"]

RAY = Path(sys.executable).with_name("ray")
HEAD = "127.0.0.3"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def raylet_of(ip: str) -> int | None:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"raylet") and f"--node_ip_address={ip}".encode() in argv:
            return int(entry.name)
    return None


def reload_auth() -> None:
    from ray._private.authentication_test_utils import reset_auth_token_state

    reset_auth_token_state()


class Cluster:
    """A head and one more raylet on loopback; ``env`` reaches both and this process."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        token = root / "token"
        token.write_text(secrets.token_hex(32))
        self.env = {
            **os.environ,
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN_PATH": str(token),
            "RAY_USAGE_STATS_ENABLED": "0",
            # a lost node is noticed in about two seconds, not the default thirty
            "RAY_health_check_period_ms": "500",
            "RAY_health_check_timeout_ms": "500",
            "RAY_health_check_failure_threshold": "3",
        }
        self.address = f"{HEAD}:{self.port}"
        self.client_port = free_port()
        self.client_address = f"ray://{HEAD}:{self.client_port}"

    def start(self) -> None:
        self._ray(
            "start", "--head", f"--node-ip-address={HEAD}", f"--port={self.port}",
            f"--ray-client-server-port={self.client_port}",
            "--num-cpus=2", '--resources={"head": 4}', "--labels=pool=head",
            "--include-dashboard=false", "--disable-usage-stats",
            f"--temp-dir={self.root / 'ray'}",
        )  # fmt: skip
        self.add_second()

    def add_second(self) -> None:
        self._ray(
            "start", f"--address={self.address}", "--node-ip-address=127.0.0.2",
            "--num-cpus=1", '--resources={"second": 1}', "--labels=pool=second",
            "--disable-usage-stats",
        )  # fmt: skip

    def kill_second(self) -> None:
        pid = raylet_of("127.0.0.2")
        assert pid is not None, "the second raylet is not running"
        os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        """SIGKILL every process of this cluster (its temporary directory or its port
        is on their command line); other Ray instances on the machine are left alone."""
        marks = (str(self.root).encode(), f":{self.port}".encode())
        for _ in range(3):
            for entry in Path("/proc").iterdir():
                if not entry.name.isdigit() or int(entry.name) == os.getpid():
                    continue
                try:
                    cmdline = (entry / "cmdline").read_bytes()
                except OSError:
                    continue
                if any(mark in cmdline for mark in marks):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(entry.name), signal.SIGKILL)
            time.sleep(0.5)

    def _ray(self, *args: str) -> None:
        done = subprocess.run(
            [str(RAY), *args], env=self.env, capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
