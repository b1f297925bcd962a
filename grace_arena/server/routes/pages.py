"""The pages a browser opens: the phone's buzzer and the projector's display."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import FileResponse

from grace_arena.server.arena import CLIENT_DIR

__all__ = ["router"]

router = APIRouter()


@router.get("/", include_in_schema=False)
def buzzer_page() -> FileResponse:
    return FileResponse(CLIENT_DIR / "index.html")


@router.get("/display", include_in_schema=False)
def display_page() -> FileResponse:
    return FileResponse(CLIENT_DIR / "display.html")
