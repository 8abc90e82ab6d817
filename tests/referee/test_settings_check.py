"""RefereeSettings.check: every setting that would leave the referee open or broken is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.settings import RefereeSettings


def test_good_settings_pass(tmp_path: Path) -> None:
    (tmp_path / "cert.pem").write_text("certificate")
    (tmp_path / "key.pem").write_text("key")
    RefereeSettings().check()
    RefereeSettings(
        listen="0.0.0.0:50051",
        admin_token="secret",
        database_url="postgresql+psycopg://arena:password@db:5432/arena",
        tls_cert=str(tmp_path / "cert.pem"),
        tls_key=str(tmp_path / "key.pem"),
    ).check()
    RefereeSettings(processes=4, relay_url="redis://127.0.0.1:6379/2").check()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (RefereeSettings(listen="0.0.0.0:50051"), "needs an admin token"),
        (RefereeSettings(listen="[::]:50051"), "needs an admin token"),
        (RefereeSettings(tls_cert="cert.pem"), "both a certificate and a key"),
        (RefereeSettings(max_strikes=0), "max_strikes >= 1"),
        (RefereeSettings(max_message_bytes=10), "at least 1024"),
        (RefereeSettings(flood_limit=-1), "rate bounds"),
        (RefereeSettings(database_url="not a url"), "database URL is not one SQLAlchemy can use"),
        (RefereeSettings(database_url="nosuchdb://x/y"), "database URL is not one SQLAlchemy"),
        (RefereeSettings(database_url="postgresql://db:port/arena"), "database URL is not one"),
        (RefereeSettings(processes=0), "at least 1"),
        (RefereeSettings(processes=2), "needs --relay"),
        (
            RefereeSettings(processes=2, relay_url="redis://r/2", listen="127.0.0.1:0"),
            "fixed port",
        ),
        (RefereeSettings(relay_url="http://r:6379"), "redis://"),
    ],
)
def test_bad_settings_are_refused(settings: RefereeSettings, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        settings.check()


def test_a_database_url_is_not_repeated_in_the_error() -> None:
    with pytest.raises(ValueError) as refused:
        RefereeSettings(database_url="nosuchdb://arena:hunter2@db/arena").check()
    assert "hunter2" not in str(refused.value)


@pytest.mark.parametrize("missing", ["tls_cert", "tls_key"])
def test_unreadable_tls_files_are_refused(tmp_path: Path, missing: str) -> None:
    files = {"tls_cert": tmp_path / "cert.pem", "tls_key": tmp_path / "key.pem"}
    for name, path in files.items():
        if name != missing:
            path.write_text("pem")
    what = "certificate" if missing == "tls_cert" else "key"
    with pytest.raises(ValueError, match=f"cannot read the TLS {what} .*No such file"):
        RefereeSettings(**{name: str(path) for name, path in files.items()}).check()  # type: ignore[arg-type]


def test_a_folder_is_not_a_tls_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="Is a directory"):
        RefereeSettings(tls_cert=str(tmp_path), tls_key=str(tmp_path)).check()
