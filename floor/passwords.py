"""The staff's PINs and the pit users' passwords, kept only as salted Argon2id hashes (argon2-cffi's
:class:`argon2.PasswordHasher`, its recommended parameters): the secret itself is never stored, logged or shown.

:func:`hash_secret` makes a hash (a fresh random salt each time, so two staff with the same PIN have different
hashes); :func:`verify_secret` checks a secret against one in constant time, and a name that has no hash is
checked against a dummy one (:func:`verify_nothing`) so that the time taken does not tell a wrong name from a
wrong password.
"""

from __future__ import annotations

import functools

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

_HASHER = PasswordHasher()


def hash_secret(secret: str) -> str:
    """A salted Argon2id hash of ``secret`` (its PHC string, ``$argon2id$v=19$m=...``)."""
    return _HASHER.hash(secret)


def verify_secret(stored: str, secret: str) -> bool:
    """Whether ``secret`` is the one ``stored`` was made of (False for a hash that is not one, too)."""
    try:
        return _HASHER.verify(stored, secret)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


@functools.cache
def _dummy() -> str:
    return _HASHER.hash("not anyone's password")


def verify_nothing(secret: str) -> bool:
    """Take as long as :func:`verify_secret` does, for a name without a hash; always False."""
    verify_secret(_dummy(), secret)
    return False


def is_hash(text: str) -> bool:
    """Whether ``text`` looks like what :func:`hash_secret` makes (what an audit row must never hold)."""
    return text.startswith("$argon2")
