"""Authors on a tier of two referee replicas (one database, one relay on a Redis of the
test's own): names taken by another author, each token where another kind is needed,
a rotated token's session ended on the replica that holds it, invites and sign-up floods.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import grpc

from cardarena_api.v1 import arena_pb2 as pb
from referee.revocation import TOKENS_CHECKED_EVERY_S
from tests.support.aio import run
from tests.support.authoring import ADMIN, Client, address, auth, code_of, refusal, tier
from tests.support.processes import ARENA
from tests.support.services import RedisServer

S = grpc.StatusCode
HELLO = pb.BotMessage(hello=pb.Hello(capacity=1))


async def wait_listed(client: Client, bot_id: str, replica: str) -> None:
    """Until the tier lists the bot's session as held by `replica`."""
    deadline = time.monotonic() + 30
    while True:
        reply = await client.matches.ListSessions(
            pb.ListSessionsRequest(), metadata=auth(ADMIN), timeout=10
        )
        if any(s.bot_id == bot_id and s.replica == replica for s in reply.sessions):
            return
        assert time.monotonic() < deadline, f"bot {bot_id} never listed at {replica}"
        await asyncio.sleep(0.05)


async def invite(client: Client, uses: int, expires_h: float = 0) -> str:
    request = pb.CreateInviteRequest(uses=uses, expires_h=expires_h)
    reply = await client.authors.CreateInvite(request, metadata=auth(ADMIN), timeout=10)
    return str(reply.code)


async def rotated_while_held(
    a: Client, b: Client, bot_token: str, author_token: str
) -> tuple[str, list[pb.RefereeMessage], float]:
    """alice holds a session on b (her stream stays open: a stream the bot closes ends its
    session), and her author rotates her token on a: the new token, what the old session
    got until it ended (with status OK: an AioRpcError fails the test here), and how long
    after the rotation it ended."""
    held = asyncio.Event()

    async def holding() -> AsyncIterator[pb.BotMessage]:
        yield HELLO
        await held.wait()

    session = b.bots.Session(holding(), metadata=auth(bot_token), timeout=60)
    first = await session.read()
    assert isinstance(first, pb.RefereeMessage) and first.HasField("welcome")
    await wait_listed(a, first.welcome.bot_id, "b")
    rotate = pb.RotateBotTokenRequest(bot="alice")
    rotated = await a.authors.RotateBotToken(rotate, metadata=auth(author_token), timeout=10)
    asked = time.monotonic()
    messages = []
    while (message := await asyncio.wait_for(session.read(), 30)) is not grpc.aio.EOF:
        messages.append(message)
    took = time.monotonic() - asked
    held.set()
    return rotated.token, messages, took


def test_names_tokens_and_a_rotation_across_the_tier(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """Author 1 registers alice on replica a; author 2 is refused alice, ALICE and a
    Cyrillic look-alike; each token is refused where another kind is needed; alice's
    session on replica b ends within a second of its token being rotated on a, the old
    token is refused from then on and the new one opens a session."""

    async def test() -> None:
        async with tier(tmp_path, redis_server, "invite", signups_per_minute=3) as (ref_a, ref_b):
            a, b = Client(ref_a), Client(ref_b)
            code = await invite(a, 2)
            one = await a.sign_up("one", code)
            two = await b.sign_up("two", code)
            alice = await a.register("alice", one.token)
            for spelling in ("alice", "ALICE", "\u0430lice"):
                with_two = b.register(spelling, two.token)
                assert await code_of(with_two) == S.PERMISSION_DENIED, spelling
            said = await refusal(b.register("ALICE", two.token), S.PERMISSION_DENIED)
            assert "the same name as 'alice'" in said and "belongs to the author 'one'" in said

            # Each token where another kind is needed.
            assert await code_of(a.register("bob", alice.token)) == S.PERMISSION_DENIED
            rotate = pb.RotateBotTokenRequest(bot="alice")
            by_two = a.authors.RotateBotToken(rotate, metadata=auth(two.token), timeout=10)
            assert await code_of(by_two) == S.PERMISSION_DENIED
            by_bot = a.authors.RotateBotToken(rotate, metadata=auth(alice.token), timeout=10)
            assert await code_of(by_bot) == S.PERMISSION_DENIED
            listing = a.matches.ListSessions(
                pb.ListSessionsRequest(), metadata=auth(one.token), timeout=10
            )
            assert await code_of(listing) == S.PERMISSION_DENIED
            moving = a.authors.TransferBot(
                pb.TransferBotRequest(name="alice", author="two"),
                metadata=auth(one.token),
                timeout=10,
            )
            assert await code_of(moving) == S.PERMISSION_DENIED
            as_author = b.bots.Session(iter([HELLO]), metadata=auth(one.token), timeout=10)
            assert await code_of(as_author.read()) == S.UNAUTHENTICATED

            token, messages, took = await rotated_while_held(a, b, alice.token, one.token)
            # The relay's word, not the database's backstop (every TOKENS_CHECKED_EVERY_S).
            assert took < TOKENS_CHECKED_EVERY_S / 2, f"the old session lasted {took:.2f} s"
            assert any("token was rotated" in m.error.message for m in messages), messages
            old = b.bots.Session(iter([HELLO]), metadata=auth(alice.token), timeout=10)
            assert await code_of(old.read()) == S.UNAUTHENTICATED
            new = b.bots.Session(iter([HELLO]), metadata=auth(token), timeout=10)
            welcome = await new.read()
            assert isinstance(welcome, pb.RefereeMessage) and welcome.HasField("welcome")
            new.cancel()
            for client in (a, b):
                await client.channel.close()

    run(test, 120)


def test_a_rotation_whose_word_the_relay_lost_still_ends_the_old_session(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """The relay loses replica a's word to b that alice's token was rotated (a push
    popped by a connection that died, an inbox that expired, a replica that stopped
    before its push): b still ends her session opened with the old token, once it
    finds the token is not the bot's any more."""

    async def test() -> None:
        async with tier(tmp_path, redis_server, "invite") as (ref_a, ref_b):
            a, b = Client(ref_a), Client(ref_b)
            one = await a.sign_up("one", await invite(a, 1))
            alice = await a.register("alice", one.token)
            assert ref_a.tier is not None
            ref_a.tier.relay.fault = lambda replica, message: message["kind"] == "revoke"
            _, messages, took = await rotated_while_held(a, b, alice.token, one.token)
            assert any("token was rotated" in m.error.message for m in messages), messages
            assert took < TOKENS_CHECKED_EVERY_S + 2, f"the old session lasted {took:.1f} s"
            for client in (a, b):
                await client.channel.close()

    run(test, 120)


def test_invites_are_used_up_expire_and_sign_up_floods_are_bounded(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """A code for one use signs up one author; a second use, a wrong code and no code
    are refused, each saying why. With open sign-up a flood from one address is
    RESOURCE_EXHAUSTED after 3 a minute, while the admin is never bounded."""

    async def test() -> None:
        async with tier(tmp_path, redis_server, "invite", signups_per_minute=0) as (ref_a, _):
            a = Client(ref_a)
            code = await invite(a, 1)
            await a.sign_up("first", code)
            # A code that expires in a few seconds: good at once, refused as expired after.
            brief = await invite(a, 100, expires_h=3 / 3600)
            await a.sign_up("quick", brief)
            deadline = time.monotonic() + 10
            for n in range(100):
                try:
                    await a.sign_up(f"slow-{n}", brief)
                except grpc.aio.AioRpcError as error:
                    assert error.code() == S.PERMISSION_DENIED
                    assert "expired" in (error.details() or ""), error.details()
                    break
                assert time.monotonic() < deadline, "the invite never expired"
                await asyncio.sleep(0.1)
            for given, said in (
                (code, "used as often as it may"),
                ("invite_wrong", "not one of this arena's"),
                ("", "by invitation"),
            ):
                details = await refusal(a.sign_up(f"late{len(given)}", given), S.PERMISSION_DENIED)
                assert said in details, details
            await a.channel.close()
        (tmp_path / "open").mkdir()
        async with tier(tmp_path / "open", redis_server, "open", signups_per_minute=3) as (
            ref_a,
            _,
        ):
            a = Client(ref_a)
            codes = [await code_of(a.sign_up(f"flood-{n}")) for n in range(5)]
            assert codes == [S.OK] * 3 + [S.RESOURCE_EXHAUSTED] * 2
            by_admin = a.authors.CreateAuthor(
                pb.CreateAuthorRequest(name="by-admin"), metadata=auth(ADMIN), timeout=10
            )
            assert await code_of(by_admin) == S.OK
            await a.channel.close()

    run(test, 120)


def test_quotas_count_per_author_on_every_replica_and_say_when_they_reset(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """2 versions of a name a day, 2 names per author: the third, asked of the other
    replica (another connection), is RESOURCE_EXHAUSTED naming the quota and its reset,
    and `arena bot register` prints that line."""

    async def test() -> None:
        bounds = {"versions_per_name_per_day": 2, "names_per_author": 2}
        async with tier(tmp_path, redis_server, "open", signups_per_minute=3, **bounds) as (
            ref_a,
            ref_b,
        ):
            a, b = Client(ref_a), Client(ref_b)
            author = await a.sign_up("busy")
            await a.register("quick", author.token)
            await b.register("quick", author.token)
            said = await refusal(a.register("quick", author.token), S.RESOURCE_EXHAUSTED)
            assert "'versions per bot name per day' (2) is used up; it resets at 20" in said
            printed = await asyncio.to_thread(
                subprocess.run,
                [*ARENA, "bot", "register", "quick", "--version", "3", "--referee",
                 address(ref_b), "--author-token", author.token],
                capture_output=True,
                text=True,
                timeout=60,
            )  # fmt: skip
            assert printed.returncode == 1 and printed.stderr.count("\n") == 1, printed.stderr
            assert "RESOURCE_EXHAUSTED: the quota 'versions per bot name per day'" in (
                printed.stderr
            )
            await b.register("other", author.token)
            assert await code_of(a.register("third", author.token)) == S.RESOURCE_EXHAUSTED
            for client in (a, b):
                await client.channel.close()

    run(test, 120)
