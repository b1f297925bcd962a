"""Alembic environment: the record's SQLModel metadata, any SQLAlchemy URL."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

import grace_arena.record.models  # noqa: F401  (registers the tables)
from grace_arena.record.db import default_db_url, make_engine

config = context.config
target_metadata = SQLModel.metadata
#: The PostgreSQL advisory lock held while migrating: the bytes of "grace", a key no other
#: code takes.
MIGRATION_LOCK = 0x67_7261_6365


def _url() -> str:
    return config.get_main_option("sqlalchemy.url") or default_db_url()


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = make_engine(_url())
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            # SQLite alters a table by copying it and dropping the old one, which the foreign
            # keys of the tables pointing at it would refuse; the pragma only takes effect
            # outside a transaction.
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            connection.commit()
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            if connection.dialect.name == "postgresql":
                # Servers started at once on one record would each create the tables: one
                # migrates, the others wait here and then find the record at head.
                connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            context.run_migrations()
        if sqlite:
            connection.exec_driver_sql("PRAGMA foreign_keys=ON")
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
