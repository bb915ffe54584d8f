"""cdc_cluster/servers.py's `Server.start`: a server that stopped at its start because a port it
was to listen on was taken meanwhile starts again on new ports (its own process, real sockets)."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from cdc_cluster.servers import LOOPBACK, PortTakenError, Server, ServerError, free_port

# A server that listens on the port it is given, as a real server fails when the port is taken:
# Python's bind error names it ("[Errno 98] Address already in use").
LISTEN = (
    "import socket, sys, time\n"
    "s = socket.socket()\n"
    "s.bind(('127.0.0.1', int(sys.argv[1])))\n"
    "s.listen()\n"
    "print('listening', flush=True)\n"
    "time.sleep(600)\n"
)


class Listener(Server):
    name = "listener"
    start_timeout = 30.0

    def __init__(self, directory: Path, ports: list[int], chooses: bool = True) -> None:
        super().__init__(directory)
        self.offered = ports  # the ports each start takes, in turn; then free ones
        self.chooses = chooses
        self.port = self.offered.pop(0)
        self.starts = 0

    def _choose_ports(self) -> bool:
        if not self.chooses:
            return False
        self.port = self.offered.pop(0) if self.offered else free_port()
        return True

    def _command(self) -> list[str]:
        self.starts += 1
        return [sys.executable, "-c", LISTEN, str(self.port)]

    def _ready(self) -> bool:
        # Its own word in this start's part of the log, not a connection: the test's socket on a
        # taken port would answer that.
        return "listening" in self._log_text(self._log_start)


@pytest.fixture
def taken():
    """A port that this test's own socket listens on."""
    with socket.socket() as holder:
        holder.bind((LOOPBACK, 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_a_server_whose_port_was_taken_starts_again_on_a_new_one(tmp_path: Path, taken: int) -> None:
    server = Listener(tmp_path, [taken])
    with server:
        assert server.running and server.starts == 2 and server.port != taken
    assert not server.running
    log = server.log_file.read_text(encoding="utf-8")
    assert log.count("Address already in use") == 1  # the first start's, kept in the log


def test_a_server_that_cannot_choose_its_ports_says_which_was_taken(tmp_path: Path, taken: int) -> None:
    server = Listener(tmp_path, [taken], chooses=False)
    with pytest.raises(PortTakenError, match="(?s)listener stopped while starting.*Address already in use"):
        server.start()
    assert server.starts == 1 and not server.running


def test_the_starts_stop_after_port_attempts(tmp_path: Path, taken: int) -> None:
    server = Listener(tmp_path, [taken] * 5)
    with pytest.raises(PortTakenError):
        server.start()
    assert server.starts == Server.port_attempts == 3


def test_a_server_that_stops_for_another_reason_is_not_started_again(tmp_path: Path) -> None:
    class Failing(Listener):
        def _command(self) -> list[str]:
            self.starts += 1
            return [sys.executable, "-c", "raise SystemExit('no configuration')"]

    server = Failing(tmp_path, [free_port()])
    with pytest.raises(ServerError, match="no configuration") as raised:
        server.start()
    assert not isinstance(raised.value, PortTakenError) and server.starts == 1
