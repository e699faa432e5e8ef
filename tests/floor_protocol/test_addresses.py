"""One parser for broker URLs and one for ``host:port`` (floor_protocol.addresses), and every place a user
writes one goes through it: the table's config, ``shoe-floor``, ``shoe-controller demo`` and ``shoe-sim``."""

from __future__ import annotations

import argparse

import pytest

from controller.commands import UsageError
from controller.config import ConfigError, FloorSection, Settings, parse_config
from demo.floor import split_bind
from floor.cli import _bind
from floor_protocol.addresses import AddressError, Broker, HostPort, parse_broker, parse_host_port
from hw_sim.cli import _tcp


@pytest.mark.parametrize(
    ("url", "broker"),
    [
        ("mqtt://floor", Broker("floor", 1883, False)),
        ("mqtts://floor", Broker("floor", 8883, True)),
        ("mqtt://10.0.0.5:1884/", Broker("10.0.0.5", 1884, False)),
        ("mqtts://[::1]:8884", Broker("::1", 8884, True)),
    ],
)
def test_broker_urls(url: str, broker: Broker) -> None:
    assert parse_broker(url) == broker
    assert FloorSection(broker=url).address == broker


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://floor", "is not a broker URL (mqtt://host:port or mqtts://host:port)"),
        ("mqtt://", "no host"),
        ("mqtt://floor:99999", "bad port, must be 1-65535"),
        ("mqtt://floor:0", "bad port, must be 1-65535"),
        ("mqtt://floor/path", "is not a broker URL"),
        ("mqtt://floor?x=1", "is not a broker URL"),
        ("mqtt://floor#x", "is not a broker URL"),
        ("mqtt://user:secret@floor", "put no credentials in the broker URL"),
        ("mqtt://flo or", "is not a broker URL"),
        ("mqtt://" + "a" * 400, "is not a broker URL"),
        (7, "is not a broker URL"),
    ],
)
def test_bad_broker_urls_are_one_line(url: object, says: str) -> None:
    with pytest.raises(AddressError) as caught:
        parse_broker(url)
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_the_config_and_the_floor_refuse_the_same_broker_urls() -> None:
    with pytest.raises(ConfigError, match="put no credentials"):
        parse_config('[floor]\nenabled = true\nbroker = "mqtt://u:p@floor"\n')
    assert Settings().floor.address == Broker("127.0.0.1", 1883, False)


@pytest.mark.parametrize(
    ("text", "any_port", "address"),
    [
        ("127.0.0.1:8080", False, ("127.0.0.1", 8080)),
        ("scoreboard.local:65535", False, ("scoreboard.local", 65535)),
        ("[::1]:9000", False, ("::1", 9000)),
        ("127.0.0.1:0", True, ("127.0.0.1", 0)),
    ],
)
def test_host_port(text: str, any_port: bool, address: tuple[str, int]) -> None:
    assert parse_host_port(text, any_port=any_port) == HostPort(*address)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("8080", "must be host:port"),
        (":8080", "must be host:port"),
        ("localhost:0", "port must be 1-65535"),
        ("localhost:http", "port must be 1-65535"),
        ("localhost:٣", "port must be 1-65535"),
        ("::1:8080", "IPv6 host in brackets"),
        ("[nonsense]:8080", "not an IPv6 address"),
        ("[::1]8080", "must be host:port"),
        ("bad_host!:8080", "not a host name"),
    ],
)
def test_bad_host_port_is_one_line(text: str, says: str) -> None:
    with pytest.raises(AddressError) as caught:
        parse_host_port(text)
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_every_command_line_reads_host_port_with_the_one_parser() -> None:
    for good in ("127.0.0.1:0", "[::1]:8470", "pit.local:8470"):
        want = parse_host_port(good, any_port=True)
        assert _bind(good) == _tcp(good) == split_bind("--scoreboard", good) == want
    for bad in ("nope", "h:70000", "::1:80", "bad_host!:80"):
        with pytest.raises(AddressError) as plain:
            parse_host_port(bad, any_port=True)
        reason = str(plain.value)
        with pytest.raises(argparse.ArgumentTypeError, match="HOST:PORT") as floor_error:
            _bind(bad)
        with pytest.raises(argparse.ArgumentTypeError, match="HOST:PORT") as sim_error:
            _tcp(bad)
        with pytest.raises(UsageError, match="--scoreboard must be HOST:PORT") as demo_error:
            split_bind("--scoreboard", bad)
        for error in (floor_error, sim_error, demo_error):
            assert reason in str(error.value)
