"""Ed25519 keys and signatures of the floor link: what a table's record and the floor's ack prove, stated once.

Two keys, two directions:

* a **table key** (``shoe-controller keygen``): the table's floor link signs every record it sends, over
  :func:`record_message` (the table id, the seq and the record's hash; the hash covers the rest of the record
  and, through ``prev``, every record before it). The archive holds the table's public key (``shoe-floor
  enroll``) and archives nothing else.
* a **floor key** (``shoe-floor keygen``): every collector of a floor signs the acks it publishes, over
  :func:`ack_message` (the archive's id, the table, the seq and that record's hash). A table stores an ack, and
  prunes on it, only when it verifies with ``[floor] floor_public_key`` and the hash is its own record's. The
  floor signs its site's staff list (:mod:`floor_protocol.staff`) with the same key, over :func:`staff_message`.

A key is rotated with a **key statement** (:class:`KeyStatement`): the new public key signed by the old private
key, over :func:`key_message`; ``shoe-floor enroll --statement FILE`` takes it without the operator having to
trust the file's origin.

Public keys are written as one line ``ed25519:<base64 of the 32 raw bytes>``; signatures as the standard base64
of their 64 bytes (88 characters). Every message starts with its own domain line, so a signature made for one
purpose is never valid for another. Nothing here raises on hostile input except :class:`SigningError` (one line).
Pure: the key files the commands write and read are :mod:`commandline.keyfile`'s.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = [
    "PUBLIC_PREFIX",
    "SIGNATURE_CHARS",
    "KeyStatement",
    "SigningError",
    "ack_message",
    "format_public_key",
    "generate_key",
    "key_id",
    "key_message",
    "parse_public_key",
    "parse_signature",
    "private_key_from_pem",
    "private_key_pem",
    "record_message",
    "sign",
    "staff_message",
    "verify",
]

#: How a public key is written: ``ed25519:`` and the standard base64 of its 32 raw bytes (44 characters).
PUBLIC_PREFIX = "ed25519:"
#: Length of a signature as written (standard base64 of 64 bytes).
SIGNATURE_CHARS = 88

_RECORD_DOMAIN = b"shoe-controller/record/v1\n"
_ACK_DOMAIN = b"shoe-floor/ack/v1\n"
_KEY_DOMAIN = b"shoe-controller/key/v1\n"
_STAFF_DOMAIN = b"shoe-floor/staff/v1\n"


class SigningError(ValueError):
    """A key that cannot be read, written or parsed. ``str()`` is one line naming the problem."""


# -- the messages each signature covers --------------------------------------------------------------------
def _fields(*parts: str | int) -> bytes:
    return "\n".join(str(p) for p in parts).encode("utf-8", "surrogatepass")


def record_message(table: str, seq: int, record_hash: str) -> bytes:
    """What a table signs for one record."""
    return _RECORD_DOMAIN + _fields(table, seq, record_hash)


def ack_message(archive: str, table: str, seq: int, record_hash: str) -> bytes:
    """What the floor signs for one ack: archive ``archive`` holds table ``table``'s records through ``seq``,
    the last of which has hash ``record_hash``."""
    return _ACK_DOMAIN + _fields(archive, table, seq, record_hash)


def staff_message(site: str, body: bytes) -> bytes:
    """What the floor signs for a site's staff list (``body``: its canonical JSON, the signature left out)."""
    return _STAFF_DOMAIN + _fields(site) + b"\n" + body


def key_message(table: str, public_key: str) -> bytes:
    """What a table's old key signs to hand over to its new one (``public_key`` as written)."""
    return _KEY_DOMAIN + _fields(table, public_key)


# -- keys ----------------------------------------------------------------------------------------------------
def generate_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def private_key_pem(key: Ed25519PrivateKey) -> bytes:
    """``key`` as a key file holds it: unencrypted PKCS#8 PEM (:mod:`commandline.keyfile` writes it, 0600)."""
    pem, pkcs8 = serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8
    return key.private_bytes(pem, pkcs8, serialization.NoEncryption())


def private_key_from_pem(data: bytes, where: str) -> Ed25519PrivateKey:
    """The Ed25519 private key in a key file's bytes; :class:`SigningError` naming ``where`` for anything else."""
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise SigningError(f"{where}: not an unencrypted PEM private key (write one with keygen)") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningError(f"{where}: a {type(key).__name__.removeprefix('_')}, not an Ed25519 key")
    return key


def format_public_key(key: Ed25519PublicKey | Ed25519PrivateKey) -> str:
    """``ed25519:<base64>`` of a public key (or of a private key's public half)."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return PUBLIC_PREFIX + base64.b64encode(raw).decode()


def parse_public_key(text: str) -> Ed25519PublicKey:
    """The key written as ``ed25519:<base64 of 32 bytes>``; :class:`SigningError` for anything else."""
    if not isinstance(text, str) or len(text) > 100:
        raise SigningError("a public key is one line 'ed25519:<base64>' of 52 characters")
    text = text.strip()
    if not text.startswith(PUBLIC_PREFIX):
        raise SigningError(f"a public key starts with {PUBLIC_PREFIX!r} (as keygen prints it), not {text[:12]!r}")
    try:
        raw = base64.b64decode(text[len(PUBLIC_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        raise SigningError("a public key's base64 is not valid") from None
    if len(raw) != 32:
        raise SigningError(f"an Ed25519 public key is 32 bytes, not {len(raw)}")
    return Ed25519PublicKey.from_public_bytes(raw)


def key_id(key: Ed25519PublicKey | Ed25519PrivateKey | str) -> str:
    """A short name for a public key in logs, alerts and the archive: the first 16 hex digits of the sha256 of
    its raw bytes."""
    public = parse_public_key(key) if isinstance(key, str) else key
    if isinstance(public, Ed25519PrivateKey):
        public = public.public_key()
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


# -- signatures ----------------------------------------------------------------------------------------------
def sign(key: Ed25519PrivateKey, message: bytes) -> str:
    """The signature of ``message`` as written (88 characters of base64)."""
    return base64.b64encode(key.sign(message)).decode()


def parse_signature(text: object) -> bytes | None:
    """The 64 bytes of a written signature, or None when it is not one."""
    if not isinstance(text, str) or len(text) != SIGNATURE_CHARS:
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 64 else None


def verify(key: Ed25519PublicKey, message: bytes, signature: object) -> bool:
    """Whether ``signature`` (as written) is ``key``'s over ``message``. Never raises."""
    raw = parse_signature(signature)
    if raw is None:
        return False
    try:
        key.verify(raw, message)
    except InvalidSignature:
        return False
    return True


@dataclass(frozen=True, slots=True)
class KeyStatement:
    """A table's old key handing over to a new one: ``sig`` is the old key's over :func:`key_message`."""

    table: str
    public_key: str  # the new key, as written
    sig: str

    @classmethod
    def make(cls, old: Ed25519PrivateKey, table: str, new_public: str) -> KeyStatement:
        parse_public_key(new_public)
        return cls(table, new_public, sign(old, key_message(table, new_public)))

    def verify(self, old: Ed25519PublicKey) -> bool:
        return verify(old, key_message(self.table, self.public_key), self.sig)

    def to_json(self) -> str:
        return json.dumps({"kind": "key", "table": self.table, "public_key": self.public_key, "sig": self.sig})

    @classmethod
    def from_json(cls, text: str | bytes) -> KeyStatement:
        """Read a statement; :class:`SigningError` naming the first problem."""
        if len(text) > 1024:
            raise SigningError("a key statement is one short JSON line (keygen --rotate writes it)")
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError):
            raise SigningError("a key statement is JSON (keygen --rotate writes it)") from None
        if not isinstance(data, dict) or data.get("kind") != "key":
            raise SigningError('a key statement is a JSON object with "kind": "key"')
        table, public, sig = data.get("table"), data.get("public_key"), data.get("sig")
        if not isinstance(table, str) or not isinstance(public, str) or parse_signature(sig) is None:
            raise SigningError("a key statement needs table, public_key and sig")
        parse_public_key(public)
        assert isinstance(sig, str)
        return cls(table, public, sig)
