"""/healthz for load balancers, start-up migration settings and the
`flask --app webapp db ...` commands."""

from __future__ import annotations

from webapp import create_app
from webapp.infra.storage import LATEST_VERSION, Storage, get_storage


def test_healthz_reports_the_database(db_url):
    app = create_app({"TESTING": True, "DATABASE_URL": db_url})
    response = app.test_client().get("/healthz")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "database": "ok"}
    assert response.headers["Cache-Control"] == "no-store"
    get_storage(app).dispose()


def test_healthz_is_503_when_the_database_is_unreachable():
    # Nothing listens on port 1; without auto-migration the app still starts.
    app = create_app(
        {"TESTING": True, "DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none", "DATABASE_AUTO_MIGRATE": 0}
    )
    response = app.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.get_json() == {"status": "error", "database": "unavailable"}


def test_default_database_is_sqlite_in_the_instance_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("PLAYGROUND_DATABASE_URL", raising=False)
    app = create_app({"TESTING": True})
    try:
        assert app.config["DATABASE_URL"].startswith("sqlite:///")
        assert app.config["DATABASE_URL"].endswith(f"{app.instance_path}/playground.sqlite3")
    finally:
        get_storage(app).dispose()


def test_database_url_from_the_environment(db_url, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_DATABASE_URL", db_url)
    app = create_app({"TESTING": True})
    assert app.config["DATABASE_URL"] == db_url
    get_storage(app).dispose()


def test_cli_upgrade_version_usage(db_url):
    app = create_app({"TESTING": True, "DATABASE_URL": db_url, "DATABASE_AUTO_MIGRATE": 0})
    runner = app.test_cli_runner()
    assert runner.invoke(args=["db", "version"]).output.strip() == "0"
    upgraded = runner.invoke(args=["db", "upgrade"])
    assert upgraded.exit_code == 0 and f"schema version {LATEST_VERSION}" in upgraded.output
    assert runner.invoke(args=["db", "version"]).output.strip() == str(LATEST_VERSION)
    app.test_client().post("/api/share", json={"tool": "bytes", "text": "x"})
    usage = runner.invoke(args=["db", "usage"]).output.split()
    assert usage[:2] == ["state", "1"]
    get_storage(app).dispose()
    assert Storage(db_url).schema_version() == LATEST_VERSION
