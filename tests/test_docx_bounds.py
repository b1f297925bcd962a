"""A ``.docx`` is a zip archive: every member's size is checked before it is read, by what the
archive declares and by what it holds, so a small file that decompresses to gigabytes (a
thumbnail of zeros) is refused in bounded memory, by ``packet validate``, ``packet import``
and the server's loading alike."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from test_packet_layouts import Doc, _regular
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core import packet_layouts
from grace_arena.core.packet import validate_packet_file

MIB = 1 << 20
THUMBNAIL = "docProps/thumbnail.jpeg"


def _bomb(path: Path, members: dict[str, int]) -> Path:
    """A real packet (python-docx writes it), with ``members`` added or put in place of its
    own: each that many MiB of zeros, deflated (a MiB of zeros takes about a KiB). python-docx
    gives every document a thumbnail that the package refers to, so a Word reader loads it as
    it loads the text."""
    source = _regular(Doc()).save(path.with_suffix(".plain.docx"))
    with zipfile.ZipFile(source) as archive:
        parts = {n: archive.read(n) for n in archive.namelist() if n not in members}
    chunk = bytes(MIB)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
        for name, mib in members.items():
            with archive.open(name, "w") as member:
                for _ in range(mib):
                    member.write(chunk)
    return path


def _lie_about(path: Path, name: str, size: int) -> None:
    """Make the archive's headers (central directory and local) say ``name`` holds ``size``
    bytes uncompressed, whatever it holds."""
    raw = bytearray(path.read_bytes())
    encoded = name.encode()
    for signature, size_at, name_len_at, name_at in (
        (b"PK\x01\x02", 24, 28, 46),  # central directory entry
        (b"PK\x03\x04", 22, 26, 30),  # local header
    ):
        at = raw.find(signature)
        while at != -1:
            (length,) = struct.unpack_from("<H", raw, at + name_len_at)
            if raw[at + name_at : at + name_at + length] == encoded:
                struct.pack_into("<I", raw, at + size_at, size)
            at = raw.find(signature, at + 4)
    path.write_bytes(bytes(raw))


def _validate_in_a_process(path: Path) -> tuple[list[str], float]:
    """The problems ``validate_packet_file`` finds, and how much the process's peak memory
    grew while it looked (MB): in a process of its own, so the peak is this file's."""
    script = (
        "import json, resource, sys\n"
        "import docx, lxml.etree\n"
        "from grace_arena.core.packet import validate_packet_file\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "problems = [p.message for p in validate_packet_file(sys.argv[1])]\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(json.dumps([problems, (after - before) / 1024]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    problems, grew = json.loads(done.stdout)
    return problems, grew


def test_a_thumbnail_bomb_is_refused_before_it_is_decompressed(tmp_path: Path) -> None:
    path = _bomb(tmp_path / "bomb.docx", {THUMBNAIL: 200})
    assert path.stat().st_size < 1 * MIB  # 200 MiB inside
    problems, grew = _validate_in_a_process(path)
    assert problems == [
        f"too large for a packet: its part {THUMBNAIL} is 210 MB (at most 64 MB)"
    ], problems
    assert grew < 40, f"memory grew by {grew:.0f} MB"


def test_a_member_whose_headers_understate_it_is_refused_in_bounded_memory(
    tmp_path: Path,
) -> None:
    path = _bomb(tmp_path / "liar.docx", {THUMBNAIL: 100})
    _lie_about(path, THUMBNAIL, 1000)
    with zipfile.ZipFile(path) as archive:
        assert archive.getinfo(THUMBNAIL).file_size == 1000  # what the archive declares
    problems, grew = _validate_in_a_process(path)
    (problem,) = problems
    assert problem.startswith("not a"), problem
    assert THUMBNAIL in problem
    assert grew < 40, f"memory grew by {grew:.0f} MB"


def test_members_each_small_enough_but_too_large_together_are_refused(tmp_path: Path) -> None:
    members = {f"word/media/image{i}.png": 50 for i in range(3)}
    path = _bomb(tmp_path / "many.docx", members)
    (problem,) = validate_packet_file(path)
    assert (
        problem.message == "too large for a packet: the whole document is 158 MB (at most 128 MB)"
    )


def test_too_many_members_are_refused(tmp_path: Path) -> None:
    members = {f"customXml/extra{i}.xml": 0 for i in range(packet_layouts.MAX_DOCX_MEMBERS)}
    path = _bomb(tmp_path / "crowd.docx", members)
    (problem,) = validate_packet_file(path)
    assert problem.message.startswith("too large for a packet: 1,0")
    assert problem.message.endswith("parts (at most 1,000)")


@pytest.mark.parametrize("command", ["validate", "import"])
def test_packet_commands_refuse_the_bomb(tmp_path: Path, command: str) -> None:
    path = _bomb(tmp_path / "bomb.docx", {THUMBNAIL: 100})
    result = CliRunner().invoke(app, ["packet", command, str(path)])
    assert result.exit_code == 1, result.output
    assert f"its part {THUMBNAIL} is 105 MB (at most 64 MB)" in result.output
    assert not path.with_suffix(".yaml").exists()


def test_a_packet_with_a_picture_of_its_own_still_reads(tmp_path: Path) -> None:
    path = _bomb(tmp_path / "pictured.docx", {THUMBNAIL: 1})
    assert validate_packet_file(path) == []
