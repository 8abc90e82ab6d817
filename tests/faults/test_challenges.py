"""Challenges on a tier of two referee replicas (one database, one relay on a Redis of
the test's own), replica a on 127.0.0.1 and b on [::1] (two client addresses), with
real bots over gRPC: an author challenges another's bots and gets an unrated result;
the refusals each name what is wrong; the quotas count per author whatever the address.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import grpc
from sqlalchemy import select

from cardarena_api.v1 import arena_pb2 as pb
from ladder import recording
from ladder.models import AuthorRow, MatchRow, RatingHistoryRow, RatingRow, ResultRow
from ladder.store import Store
from tests.support.aio import eventually, run
from tests.support.authoring import (
    ADMIN,
    Client,
    GatedBot,
    auth,
    code_of,
    online,
    playing,
    refusal,
    tier,
)
from tests.support.processes import ARENA
from tests.support.services import RedisServer

S = grpc.StatusCode


def arena(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *argv], capture_output=True, text=True, timeout=120)


def test_an_author_challenges_another_authors_bots_unrated(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """Author two challenges alice (author one's) with its bot: an unrated result, recorded
    with the challenger, every rating as it was; asked again, the same match. Refused,
    each in one line naming it: a bot that does not accept challenges, an offline bot,
    another author's bot as the challenger, a bot token, no token; SetBot of another
    author's name. Then `arena challenge --json` says "rated": false."""

    async def test() -> None:
        async with tier(tmp_path, redis_server) as (ref_a, ref_b):
            a, b = Client(ref_a), Client(ref_b)
            one, two = await a.author("one"), await b.author("two")
            alice, alice_token = await a.bot("alice", one, "golden10")
            carol, carol_token = await a.bot("carol", one, "golden10")
            await a.bot("ghost", one, "golden10")
            bolt, bolt_token = await b.bot("bolt", two, "golden10")
            dash, dash_token = await b.bot("dash", two, "golden10")
            store = ref_a.store
            printed = await asyncio.to_thread(
                arena,
                "bot", "set", "CAROL", "--challenges", "off", "--json",
                "--referee", a.address, "--author-token", one,
            )  # fmt: skip
            assert printed.returncode == 0, printed.stderr
            assert json.loads(printed.stdout) == {"name": "carol", "challenges": False}
            off = pb.SetBotRequest(bot="carol", challenges=False)
            said = await refusal(
                b.authors.SetBot(off, metadata=auth(two), timeout=10), S.PERMISSION_DENIED
            )
            assert "belongs to the author 'one'" in said, said
            runs = [(a.address, alice_token), (b.address, bolt_token), (a.address, dash_token)]
            async with playing(*runs, (b.address, carol_token)):
                await online(a, alice, bolt, dash, carol)
                # A rated match first: alice, bolt and dash have ratings to keep.
                rated = pb.StartMatchRequest(
                    match_id="rated", game="golden10", players=3, bot_ids=[alice, bolt, dash]
                )
                await a.matches.StartMatch(rated, metadata=auth(ADMIN), timeout=30)
                await a.matches.GetMatch(pb.GetMatchRequest(match_id="rated", wait=True))
                await asyncio.to_thread(recording.record_match, store, "rated")
                before = await asyncio.to_thread(ratings, store)
                assert len(before) == 3

                match = await b.challenge(
                    two, "bolt", ["alice", "dash"], "golden10", challenge_id="first", wait=True
                )
                assert match.status == "finished", match
                assert (match.challenge, match.challenger) == (True, "two")
                assert match.match_id.startswith("ch-") and match.match_id.endswith("-first")
                seen = await a.matches.GetMatch(pb.GetMatchRequest(match_id=match.match_id))
                assert (seen.challenge, seen.challenger) == (True, "two")

                async def recorded() -> list[ResultRow]:
                    return await asyncio.to_thread(results, store, match.match_id)

                rows = await eventually(recorded, "the challenge recorded", 30)
                assert sorted(row.bot_id for row in rows) == sorted([alice, bolt, dash])
                assert all(row.practice for row in rows)
                assert await asyncio.to_thread(ratings, store) == before
                assert await asyncio.to_thread(challenger_of, store, match.match_id) == "two"
                hour = await asyncio.to_thread(counters, store, "two")
                again = await a.challenge(
                    two, "bolt", ["alice", "dash"], "golden10", challenge_id="first"
                )
                assert again.match_id == match.match_id and again.status == "finished"
                assert await asyncio.to_thread(counters, store, "two") == hour

                # Refusals, each naming what is wrong.
                for opponents, code, words in (
                    (["alice", "carol"], S.FAILED_PRECONDITION, "bot carol does not accept"),
                    (["alice", "ghost"], S.FAILED_PRECONDITION, "bot ghost is offline"),
                    (["alice", "nobody"], S.NOT_FOUND, "no bot 'nobody'"),
                    (["alice", "alice"], S.INVALID_ARGUMENT, "a bot takes one seat"),
                    ([], S.INVALID_ARGUMENT, "golden10 is played by 3 to 7 players, not 1"),
                ):
                    call = a.challenge(two, "bolt", opponents, "golden10")
                    said = await refusal(call, code)
                    assert words in said, said
                # carol refuses other authors, not her own: one's alice may challenge her.
                own = await a.challenge(one, "alice", ["carol", "bolt"], "golden10", wait=True)
                assert own.status == "finished" and own.challenger == "one"
                said = await refusal(
                    b.challenge(two, "alice", ["bolt", "dash"], "golden10"), S.PERMISSION_DENIED
                )
                assert "bot alice belongs to the author 'one'" in said, said
                said = await refusal(
                    b.challenge(bolt_token, "bolt", ["alice", "dash"], "golden10"),
                    S.PERMISSION_DENIED,
                )
                assert "Challenge needs an author's token or the admin token" in said, said
                assert "a bot's token" in said, said
                no_token = b.authors.Challenge(
                    pb.ChallengeRequest(bot="bolt", opponents=["alice"], game="goof"), timeout=10
                )
                assert await code_of(no_token) == S.UNAUTHENTICATED
                assert await asyncio.to_thread(ratings, store) == before

                printed = await asyncio.to_thread(
                    arena,
                    "challenge", "dash", "--vs", "alice,bolt", "--game", "golden10",
                    "--id", "by-cli", "--json", "--referee", b.address,
                    "--author-token", two,
                )  # fmt: skip
                assert printed.returncode == 0, printed.stderr
                data = json.loads(printed.stdout)
                assert (data["rated"], data["challenge"], data["challenger"]) == (
                    False,
                    True,
                    "two",
                )
                assert data["status"] == "finished" and data["names"] == ["dash", "alice", "bolt"]
                assert data["match_id"].endswith("-by-cli")
                assert await asyncio.to_thread(ratings, store) == before
            for client in (a, b):
                await client.channel.close()

    run(test, 240)


def test_quotas_count_per_author_across_addresses_and_say_when_they_free_up(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """2 challenge matches at once and 3 challenges an hour, asked alternately through
    two addresses: the third running one is refused until one ends, the fourth of the
    hour names its reset (and `arena challenge` prints that line); asking again for a
    challenge costs nothing; the admin is exempt."""

    async def test() -> None:
        quotas = {"challenges_per_hour": 3, "challenges_at_once": 2, "signups_per_minute": 1}
        async with tier(tmp_path, redis_server, **quotas) as (ref_a, ref_b):
            a, b = Client(ref_a), Client(ref_b)
            # One sign-up a minute per address: both succeed, so the two are two addresses.
            busy, other = await a.author("busy"), await b.author("other")
            assert await code_of(a.sign_up("third")) == S.RESOURCE_EXHAUSTED
            slow, slow_token = await a.bot("slow", busy, "goof")
            pal, pal_token = await b.bot("pal", other, "goof")
            gated = GatedBot(a.address, slow_token)
            async with playing((b.address, pal_token)):
                await online(a, slow, pal)
                # Running (the gated bot answers nothing yet): 2 at once, from two addresses.
                slowly = {"deadline_ms": 60000}
                c1 = await a.challenge(busy, "slow", ["pal"], "goof", challenge_id="c1", **slowly)
                c2 = await b.challenge(busy, "slow", ["pal"], "goof", challenge_id="c2", **slowly)
                assert c1.status == c2.status == "running"
                for client in (a, b):
                    said = await refusal(
                        client.challenge(busy, "slow", ["pal"], "goof", challenge_id="c3"),
                        S.RESOURCE_EXHAUSTED,
                    )
                    assert said == (
                        "the quota 'challenge matches per author at once' (2) is used up; it "
                        "frees up when one of the author's challenges ends"
                    ), said
                # Asked again, a running challenge is answered as it is.
                again = await b.challenge(
                    busy, "slow", ["pal"], "goof", challenge_id="c1", **slowly
                )
                assert again.match_id == c1.match_id
                # The admin (the operator) has no quota.
                by_admin = await b.challenge(ADMIN, "slow", ["pal"], "goof", **slowly)
                assert by_admin.status == "running" and by_admin.challenger == "operator"
                gated.gate.set()
                for match in (c1, c2, by_admin):
                    ended = await a.matches.GetMatch(
                        pb.GetMatchRequest(match_id=match.match_id, wait=True), timeout=60
                    )
                    assert ended.status == "finished", ended
                third = await b.challenge(busy, "slow", ["pal"], "goof", challenge_id="c3")
                assert third.status in ("running", "finished")
                said = await refusal(
                    a.challenge(busy, "slow", ["pal"], "goof", challenge_id="c4"),
                    S.RESOURCE_EXHAUSTED,
                )
                assert said.startswith(
                    "the quota 'challenges per author per hour' (3) is used up; it resets at 20"
                ), said
                printed = await asyncio.to_thread(
                    arena,
                    "challenge", "slow", "--vs", "pal", "--game", "goof", "--id", "c5",
                    "--referee", b.address, "--author-token", busy,
                )  # fmt: skip
                assert printed.returncode == 1 and printed.stderr.count("\n") == 1, printed
                assert (
                    "RESOURCE_EXHAUSTED: the quota 'challenges per author per hour' (3)"
                    in printed.stderr
                ), printed.stderr
                # What exists is still answered, free.
                found = await a.challenge(
                    busy, "slow", ["pal"], "goof", challenge_id="c2", **slowly
                )
                assert found.match_id == c2.match_id
            gated.task.cancel()
            for client in (a, b):
                await client.channel.close()

    run(test, 240)


# What the store says ----------------------------------------------------------


def ratings(store: Store) -> dict[str, tuple[float, int, int]]:
    """Each bot's rating, games rated and rating changes."""
    with store.session() as session:
        history = session.scalars(select(RatingHistoryRow.bot_id)).all()
        return {
            row.bot_id: (row.rating, row.games, history.count(row.bot_id))
            for row in session.scalars(select(RatingRow))
        }


def results(store: Store, match_id: str) -> list[ResultRow]:
    with store.session() as session:
        return list(session.scalars(select(ResultRow).where(ResultRow.match_id == match_id)))


def challenger_of(store: Store, match_id: str) -> str:
    with store.session() as session:
        row = session.get(MatchRow, match_id)
        assert row is not None and row.challenger_id is not None
        author = session.get(AuthorRow, row.challenger_id)
        assert author is not None
        return author.name


def counters(store: Store, name: str) -> tuple[int, int]:
    with store.session() as session:
        row = session.scalars(select(AuthorRow).where(AuthorRow.name == name)).one()
        return row.challenges_hour, row.challenges_running
