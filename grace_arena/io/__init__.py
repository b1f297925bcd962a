"""The record's data in and out of the analysis: loading steps and buzzes from the database,
exports (CSV, JSONL, steps, GRACE JSON, QBJ) and imports (GRACE buzzpoints, QANTA questions).

This is where database code meets the analysis: :mod:`grace_arena.analysis` computes on
tables and files and imports no database code (an import-linter contract says so).
"""
