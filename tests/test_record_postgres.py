"""What only a record on a PostgreSQL server meets: several processes on one record at once.

The record's other tests run on PostgreSQL as well as SQLite (see backends.py).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from grace_arena.record.db import at_head

UPGRADE = "import sys; from grace_arena.record.db import upgrade; upgrade(sys.argv[1])"


@pytest.mark.slow
def test_processes_starting_together_on_a_new_record_all_find_it_at_head(postgres_url):
    """Every command migrates the record first: servers started at once on an empty database
    must not each create the tables."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", UPGRADE, postgres_url], stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    errors = [proc.communicate(timeout=120)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 4, "\n".join(errors)
    assert at_head(postgres_url)
