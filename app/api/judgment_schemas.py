"""Bodies of /collections/{name}/judgments and /tune: graded judgments in, a tune's status and record out."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, StrictInt, StrictStr

from app.api.schemas import MAX_ITEMS, PER_REQUEST, Strict, Text

MAX_GRADE = 10  # graded collections use up to 4 or 5 (Cranfield: 4); NDCG takes the grade as the gain


class JudgmentIn(Strict):
    query: Text = Field(description="The query as a user would send it to /search.")
    id: Annotated[StrictStr, Field(min_length=1, max_length=256)] = Field(description="A document's id.")
    grade: StrictInt = Field(
        ge=0, le=MAX_GRADE, description=f"0 not relevant; 1 to {MAX_GRADE}: relevant, the gain NDCG counts."
    )


class JudgmentsIn(Strict):
    judgments: list[JudgmentIn] = Field(min_length=1, max_length=MAX_ITEMS, json_schema_extra=PER_REQUEST)


class JudgmentOut(BaseModel):
    query: str
    id: str
    grade: int


class JudgmentsOut(BaseModel):
    judgments: list[JudgmentOut]
    queries: int = Field(description="Distinct queries judged.")


class TuneStatus(BaseModel):
    collection: str
    state: str = Field(description="running, done, failed (this server's last tune), or published (by any server).")
    args: list[str] | None = None
    started_at: float | None = None
    log: list[str] | None = Field(None, description="The tune's last lines: its choice, or why it failed.")
    ranking: dict[str, Any] | None = Field(None, description="The ranking chosen (published when `published`).")
    published: bool | None = None
    reason: str | None = None
    queries: dict[str, int] | None = Field(None, description="Judged queries it tuned on and held out.")
    held_out: dict[str, dict[str, float]] | None = Field(
        None, description="NDCG@10 and Recall@100 (x100) of the chosen and the default ranking on the held-out queries."
    )
    selection: dict[str, Any] | None = None
    search_space: dict[str, Any] | None = Field(
        None, description="The search space step: chosen, served, their held-out NDCG@10, whether it was published."
    )
    candidates: int | None = None
    at: float | None = None
