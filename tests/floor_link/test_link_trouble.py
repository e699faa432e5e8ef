"""A floor link that says what is wrong (issue 18 section 3): a broker host that does not resolve, a port that
refuses, a TLS handshake that fails and refused credentials each give one WARNING naming the cause, at the first
failure and again only on a change (or every 10 minutes), and show in the metrics and on the Status line.

The exceptions classified are real ones (a real lookup, a real refused port, a real TLS handshake against a
plain listener and against a certificate of another authority); the link processes are real ``shoe-controller
link`` processes against real Mosquitto brokers."""

from __future__ import annotations

import re
import socket
import ssl
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.config import FloorSection, default_settings
from controller.link.floor_trouble import REPEAT, Cause, Trouble, TroubleLog, from_error, from_refusal
from controller.link.process import LinkProcess
from controller.notify import Notifier
from tests.e2e.harness import Harness
from tests.floor_link.floorside import TEST_FLOOR_PUBLIC
from tests.keys import key_file
from tests.servers import Mosquitto, free_port
from tests.shipped_broker import start_shipped_broker
from tests.waiting import until

BROKER = "mqtt://broker.example:1883"


def raised(action: object) -> BaseException:
    try:
        action()  # type: ignore[operator]
    except BaseException as exc:
        return exc
    raise AssertionError("nothing raised")


def test_a_host_that_does_not_resolve_is_named_as_such() -> None:
    exc = raised(lambda: socket.getaddrinfo("no-such-host.invalid", 1883))
    trouble = from_error(exc, "mqtt://no-such-host.invalid:1883")
    assert trouble.cause is Cause.DNS
    assert "mqtt://no-such-host.invalid:1883 does not resolve" in trouble.text


def test_a_refused_port_is_named_as_such() -> None:
    port = free_port()
    exc = raised(lambda: socket.create_connection(("127.0.0.1", port), timeout=2))
    trouble = from_error(exc, f"mqtt://127.0.0.1:{port}")
    assert trouble.cause is Cause.REFUSED and "refused the connection" in trouble.text


@pytest.fixture
def plain_listener() -> Iterator[int]:
    """A TCP listener that answers a TLS client hello with plain bytes (an MQTT port, not an MQTTS one)."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(1024)
                conn.sendall(b"\x20\x02\x00\x00" * 4)  # a CONNACK-looking reply, not TLS

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(2)
        server.close()


def test_tls_to_a_plain_port_is_a_tls_trouble(plain_listener: int) -> None:
    context = ssl.create_default_context()

    def handshake() -> None:
        with socket.create_connection(("127.0.0.1", plain_listener), timeout=2) as raw:
            context.wrap_socket(raw, server_hostname="127.0.0.1")

    trouble = from_error(raised(handshake), BROKER)
    assert trouble.cause is Cause.TLS and "is that port TLS" in trouble.text


@pytest.mark.e2e
def test_a_certificate_of_another_authority_says_check_ca_file(tmp_path: Path) -> None:
    sb = start_shipped_broker(tmp_path / "sb")
    try:
        context = ssl.create_default_context()  # the system's authorities, not the test CA

        def handshake() -> None:
            with socket.create_connection(("127.0.0.1", sb.password_port), timeout=5) as raw:
                context.wrap_socket(raw, server_hostname="127.0.0.1")

        trouble = from_error(raised(handshake), BROKER)
    finally:
        sb.broker.kill()
    assert trouble.cause is Cause.TLS and "not trusted" in trouble.text and "ca_file" in trouble.text


@pytest.mark.parametrize(
    ("code", "cause", "words"),
    [
        (134, Cause.CREDENTIALS, "password_file"),
        (135, Cause.NOT_AUTHORISED, "the broker's users"),
        (136, Cause.BROKER, "refused"),
    ],
)
def test_a_refusing_broker_is_named_by_its_reason_code(code: int, cause: Cause, words: str) -> None:
    trouble = from_refusal(code, BROKER)
    assert trouble.cause is cause and words in trouble.text and BROKER in trouble.text


def test_a_trouble_is_said_once_again_on_a_change_and_again_after_ten_minutes() -> None:
    troubles = TroubleLog()
    refused = Trouble(Cause.REFUSED, "refused")
    said = [troubles.failed(refused, t) for t in (0.0, 1.0, 2.0, REPEAT - 1)]
    assert said[0] is not None and said[1:] == [None, None, None]
    again = troubles.failed(refused, REPEAT + 0.5)
    assert again is not None and "5 failed attempts" in again
    changed = troubles.failed(Trouble(Cause.DNS, "dns"), REPEAT + 1)
    assert changed is not None and "dns" in changed
    assert troubles.connected(BROKER) == f"floor link connected to {BROKER} after 6 failed attempt(s) (last: dns)"
    assert troubles.current is None and troubles.connected(BROKER) is None  # said once
    assert troubles.failures == {Cause.REFUSED: 5, Cause.DNS: 1}  # the counter never goes back
    assert troubles.failed(refused, REPEAT + 2) is not None  # a new trouble after a connection is said at once


# -- real link processes -------------------------------------------------------------------------------------


def warnings(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if "WARNING" in line and "floor link:" in line]


def metrics(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return str(response.read().decode())


def start(h: Harness, broker: str, floor: str = "") -> tuple[Path, int]:
    """``shoe-controller link`` to ``broker`` (``floor``: more of its [floor] section), metrics on a free port."""
    metrics_port = free_port()
    config = h.tmp / "link.toml"
    config.write_text(
        f'[metrics]\nenabled = true\nbind = "127.0.0.1:{metrics_port}"\n[floor]\nbroker = "{broker}"\n{floor}'
    )
    h.start_link("--config", str(config), "--floor", broker, "--site", "s1", "--table-id", "t1",
                 "--floor-key", str(h.table_key.path), "--floor-public-key", h.floor_public_key)  # fmt: skip
    return h.companion_logs[-1], metrics_port


@pytest.mark.e2e
def test_the_link_names_each_cause_once_in_its_log_and_metrics(tmp_path: Path) -> None:
    port = free_port()
    with Harness(tmp_path / "t") as h:
        h.tmp.mkdir()
        log, mport = start(h, f"mqtt://127.0.0.1:{port}")
        until(lambda: warnings(log), 15, "a warning for the refused port")
        time.sleep(4)  # paho retries every 1-2 s meanwhile: none of them is logged again
        said = warnings(log)
        assert len(said) == 1, said
        assert f"mqtt://127.0.0.1:{port} refused the connection: is the broker running on that port?" in said[0]
        page = metrics(mport)
        assert 'shoe_floor_link_trouble{cause="refused"} 1.0' in page
        failures = re.search(r'shoe_floor_connect_failures_total\{cause="refused"\} (\d+)', page)
        assert failures is not None and int(failures.group(1)) >= 2
        broker = Mosquitto(tmp_path / "mq", port=port).start()  # the broker comes up on that port
        try:
            until(lambda: "floor link connected to" in log.read_text(), 30, "the link connects")
            until(lambda: 'shoe_floor_link_trouble{cause="refused"} 0.0' in metrics(mport), 10, "trouble cleared")
        finally:
            broker.kill()
        until(lambda: len(warnings(log)) == 2, 20, "the lost connection said")
        assert "was lost" in warnings(log)[1]


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["dns", "credentials", "tls"])
def test_the_link_names_a_host_that_does_not_resolve_bad_credentials_and_a_tls_failure(
    tmp_path: Path, case: str
) -> None:
    sb = start_shipped_broker(tmp_path / "sb") if case != "dns" else None
    try:
        with Harness(tmp_path / "t") as h:
            h.tmp.mkdir()
            if sb is None:
                log, mport = start(h, "mqtt://no-such-host.invalid:1883")
                expected, cause = "does not resolve", "dns"
            elif case == "credentials":
                wrong = h.tmp / "wrong.password"
                wrong.write_text("not-the-password\n")
                floor = f'username = "t1"\npassword_file = "{wrong}"\nca_file = "{sb.ca}"\n'
                log, mport = start(h, f"mqtts://127.0.0.1:{sb.password_port}", floor)
                expected, cause = "check floor.username and floor.password_file", "not_authorised"  # Mosquitto's word
            else:
                log, mport = start(h, f"mqtts://127.0.0.1:{sb.password_port}")  # no ca_file: not trusted
                expected, cause = "the broker's certificate is not trusted", "tls"
            until(lambda: warnings(log), 20, f"a warning naming {case}")
            time.sleep(3)
            said = warnings(log)
            assert len(said) == 1 and expected in said[0], said
            assert f'shoe_floor_link_trouble{{cause="{cause}"}} 1.0' in metrics(mport)
            text = log.read_text()
            assert "Traceback" not in text
            assert text.count("cannot read the journal") == 1  # no table yet: said once, not every second
    finally:
        if sb is not None:
            sb.broker.kill()


@pytest.mark.e2e
def test_the_links_status_line_names_the_trouble_and_then_the_connection(tmp_path: Path) -> None:
    """The link service's ``Status:`` (sd_notify STATUS, as ``systemctl status`` shows it), on a real datagram
    socket standing in for systemd's: connecting, then the refused port, then connected once a broker is there."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(tmp_path / "notify"))
    listener.settimeout(10)
    port = free_port()
    floor = FloorSection.model_validate(
        {"enabled": True, "broker": f"mqtt://127.0.0.1:{port}", "site": "s1", "table": "t1",
         "key_file": str(key_file(tmp_path, "table").path), "floor_public_key": TEST_FLOOR_PUBLIC}
    )  # fmt: skip
    settings = default_settings().with_overrides(journal=str(tmp_path / "journal.db"))
    settings = settings.model_copy(update={"floor": floor})
    link = LinkProcess(settings, notifier=Notifier({"NOTIFY_SOCKET": str(tmp_path / "notify")}))
    statuses: list[str] = []

    def heard(text: str) -> bool:
        while not any(text in s for s in statuses):
            datagram = listener.recv(4096).decode()
            statuses.extend(line[7:] for line in datagram.splitlines() if line.startswith("STATUS="))
        return True

    broker = None
    try:
        link.open()
        assert heard(f"floor: connecting to mqtt://127.0.0.1:{port}")
        assert heard(f"floor: mqtt://127.0.0.1:{port} refused the connection")
        broker = Mosquitto(tmp_path / "mq", port=port).start()
        assert heard(f"floor: connected to mqtt://127.0.0.1:{port}")
    finally:
        link.close()
        listener.close()
        if broker is not None:
            broker.kill()
