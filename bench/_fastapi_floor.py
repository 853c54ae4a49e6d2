"""The minimal FastAPI endpoint bench/service_load.py puts beside `graphctx serve`: the same routes and
request shape, a fixed small answer, no auth, no stores. Under the same load client it shows what the
client, the loopback and uvicorn + FastAPI cost on their own.

    python -m uvicorn _fastapi_floor:app --app-dir bench --workers 2
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

app = FastAPI()


@app.post("/v1/{op}")
def answer(op: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"v": 1, "op": op, "items": [], "echo": body}


@app.get("/readyz")
def readyz() -> dict[str, str]:
    return {"status": "ready"}
