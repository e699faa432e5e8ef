"""The tables' keys (``shoe-floor enroll``): every key each table has had, which one is current, and the
changes: a first key, a rotation by a statement the old key signed, a replacement by the operator's word (the
old key revoked), a revocation. Each change is said in the feed, in the change's own transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from floor.archive.alerts import Alert, AlertKind, Feed, FeedItem
from floor.archive.chain import Chains
from floor.archive.dialect import is_unique_violation, now
from floor.archive.errors import EnrollError
from floor.archive.store import Store
from floor_protocol.signing import KeyStatement, SigningError, key_id, parse_public_key

_KEY_COLUMNS = '"table", public_key, key_id, enrolled_at, retired_at, revoked'


@dataclass(frozen=True, slots=True)
class TableKey:
    """One of a table's keys as the archive holds it (``table_keys``)."""

    table: str
    public_key: str  # as written: ed25519:<base64>
    key_id: str
    enrolled_at: str
    retired_at: str | None
    revoked: bool

    @property
    def current(self) -> bool:
        """The key the table's records are admitted with now."""
        return self.retired_at is None and not self.revoked

    def status(self) -> str:
        return "revoked" if self.revoked else "retired" if self.retired_at is not None else "current"


class Keys:
    """The tables' keys, on the archive's :class:`~floor.archive.store.Store`; changes said in ``feed``."""

    def __init__(self, store: Store, feed: Feed, chains: Chains) -> None:
        self._store = store
        self._feed = feed
        self._chains = chains

    def table_keys(self, table: str | None = None) -> list[TableKey]:
        """Every key enrolled (of one ``table``, or all), per table in the order they were enrolled."""
        sql = f"SELECT {_KEY_COLUMNS} FROM table_keys"
        params: list[Any] = []
        if table is not None:
            sql += ' WHERE "table" = ?'
            params.append(table)
        with self._store.transaction() as cur:
            cur.execute(self._store.sql(sql + ' ORDER BY "table", enrolled_at, key_id'), params)
            return [TableKey(str(t), str(p), str(k), str(e), r, bool(v)) for t, p, k, e, r, v in cur.fetchall()]

    def enroll(
        self, table: str, public_key: str, *, statement: KeyStatement | None = None, replace: bool = False
    ) -> FeedItem:
        """Enroll ``public_key`` as ``table``'s current key and say so in the feed (one transaction).

        A table without a key: its first (``key_enrolled``). A table with a current key: only with a
        ``statement`` for this table and key signed by the current key (``key_rotated``; the old key is
        retired) or with ``replace`` (``key_replaced``: the operator's word for a lost or stolen key; the old
        one is revoked). A table whose key is revoked: only with ``replace``. Anything else is
        :class:`EnrollError`, nothing changed."""
        try:
            new_key = parse_public_key(public_key)
        except SigningError as exc:
            raise EnrollError(f"--public-key: {exc}") from None
        public_key, new_id = public_key.strip(), key_id(new_key)
        self._store.check_file()
        known = self.table_keys(table)
        current = next((k for k in known if k.current), None)
        if any(k.key_id == new_id for k in known):
            raise EnrollError(f"table {table}: key {new_id} is already enrolled ({_status_of(known, new_id)})")
        if statement is not None:
            if current is None:
                raise EnrollError(f"table {table}: no current key to have signed the statement (enroll with --replace)")
            if statement.table != table or statement.public_key != public_key:
                raise EnrollError(f"the statement is for table {statement.table}'s key {key_id(statement.public_key)},"
                                  f" not table {table}'s {new_id}")  # fmt: skip
            if not statement.verify(parse_public_key(current.public_key)):
                raise EnrollError(f"table {table}: the statement is not signed by the current key {current.key_id}")
            kind, detail = AlertKind.KEY_ROTATED, f"key {new_id} replaces {current.key_id}, by its statement"
        elif replace:
            if not known:
                raise EnrollError(f"table {table}: no key to replace (enroll without --replace)")
            was = current or known[-1]
            kind = AlertKind.KEY_REPLACED
            detail = f"key {new_id} enrolled by the operator in place of {was.key_id} (lost or stolen; it is revoked)"
        elif current is not None:
            raise EnrollError(
                f"table {table} has key {current.key_id}: rotate with --statement FILE (signed by that key)"
                " or, for a lost key, --revoke then --replace"
            )
        elif known:
            raise EnrollError(f"table {table}'s key {known[-1].key_id} is revoked: enroll a new one with --replace")
        else:
            kind, detail = AlertKind.KEY_ENROLLED, f"key {new_id} enrolled"
        stamp = now()
        cur = self._store.conn.cursor()
        try:
            if current is not None:
                revoke = 1 if replace and statement is None else 0
                cur.execute(
                    self._store.sql(
                        'UPDATE table_keys SET retired_at = ?, revoked = ? WHERE "table" = ? AND key_id = ?'
                        " AND retired_at IS NULL AND revoked = 0"
                    ),
                    (stamp, revoke, table, current.key_id),
                )
                if cur.rowcount != 1:
                    raise EnrollError(f"table {table}: its keys changed meanwhile; nothing done, try again")
            cur.execute(
                self._store.sql(f"INSERT INTO table_keys ({_KEY_COLUMNS}) VALUES (?, ?, ?, ?, NULL, 0)"),
                (table, public_key, new_id, stamp),
            )
            (item,) = self._feed.insert(cur, [self._key_alert(cur, table, kind, detail, new_id)])
            self._store.conn.commit()
        except BaseException as exc:
            self._store.conn.rollback()
            if is_unique_violation(exc):
                raise EnrollError(f"table {table}: its keys changed meanwhile; nothing done, try again") from None
            raise
        return item

    def revoke(self, table: str) -> FeedItem:
        """Revoke ``table``'s current key: nothing of the table is admitted until a key is enrolled with
        ``replace``. Records archived under it stay (and keep verifying). :class:`EnrollError` when the table
        has no current key."""
        self._store.check_file()
        current = next((k for k in self.table_keys(table) if k.current), None)
        if current is None:
            raise EnrollError(f"table {table} has no current key to revoke")
        cur = self._store.conn.cursor()
        try:
            cur.execute(
                self._store.sql(
                    'UPDATE table_keys SET retired_at = ?, revoked = 1 WHERE "table" = ? AND key_id = ?'
                    " AND retired_at IS NULL AND revoked = 0"
                ),
                (now(), table, current.key_id),
            )
            if cur.rowcount != 1:
                raise EnrollError(f"table {table}: its keys changed meanwhile; nothing done, try again")
            detail = f"key {current.key_id} revoked: nothing of the table is archived until a new key is enrolled"
            (item,) = self._feed.insert(cur, [self._key_alert(cur, table, AlertKind.KEY_REVOKED, detail, None)])
            self._store.conn.commit()
        except BaseException:
            self._store.conn.rollback()
            raise
        return item

    def _key_alert(self, cur: Any, table: str, kind: str, detail: str, new_id: str | None) -> Alert:
        """An alert for a change of keys, with the table's site as its chain knows it (then a collector's sweep
        publishes it; a table never archived yet has no site: the alert is in the feed only)."""
        site = self._chains.site(cur, table)
        return Alert(table, None, kind, detail, site, extra={} if new_id is None else {"key_id": new_id})


def _status_of(keys: Sequence[TableKey], key: str) -> str:
    return next(k.status() for k in keys if k.key_id == key)
