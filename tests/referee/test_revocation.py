"""referee.revocation: the sessions of rotated tokens end by the database's word alone."""

from __future__ import annotations

from pathlib import Path

from ladder.authors import rotate_bot_token
from ladder.store import Store, hash_token
from referee.revocation import end_revoked
from referee.sessions import REVOKED, Problem, SessionHub
from tests.support.aio import run


def test_only_the_sessions_of_tokens_their_bots_no_longer_have_end(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    (kept, kept_token), (rotated, old_token) = (
        store.register_bot(name, "1", ["golden10"]) for name in ("kept", "rotated")
    )
    new_token = rotate_bot_token(store, rotated.id, None).token

    async def test() -> None:
        hub = SessionHub()
        staying = hub.open(kept.id, 1, credential=hash_token(kept_token))
        old = hub.open(rotated.id, 1, credential=hash_token(old_token))
        await end_revoked(store, hub)
        assert hub.connected() == [staying]
        assert old.closed and old.outbox.get_nowait() == Problem(REVOKED)
        new = hub.open(rotated.id, 1, credential=hash_token(new_token))
        await end_revoked(store, hub)
        assert hub.connected() == [staying, new]

    run(test)
