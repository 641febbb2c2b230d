"""The published schema says what this server enforces, so that a client generated from /openapi.json sends
only what is accepted: the settings' bounds and choices where a field is marked with the setting it obeys,
and each body with exclusive forms as a `oneOf` of them."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from fastapi import FastAPI

from app.core.config import Settings
from app.services.search_query import max_search_depth

MARK = "x-served"
JSON_CONTENT = "x-json-content"


def served(**limits: str) -> dict[str, Any]:
    """A field's JSON Schema extra: keywords whose value a setting decides, e.g. served(maxItems="max_texts")."""
    return {MARK: limits}


def served_values(settings: Settings) -> dict[str, Any]:
    """What each mark names, as this server is configured."""
    return {
        "max_texts": settings.max_texts,
        "max_text_chars": settings.max_text_chars,
        "max_k": settings.max_k,
        "max_search_depth": max_search_depth(settings.max_k),
        "backbones": sorted({settings.backbone, *settings.collection_backbones}),
        "models": [str(p) for p in settings.collection_models],
        "max_collection_shards": settings.max_collection_shards,
    }


def with_served_limits(schema: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """A copy of `schema` with every mark replaced by the value it names. On a nullable field the value goes to
    its non-null branches; a branch left with an empty `enum` (no model folder served) is dropped."""
    schema = copy.deepcopy(schema)

    def visit(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                visit(item)
        elif isinstance(node, dict):
            marks = node.pop(MARK, None)
            for item in node.values():
                visit(item)
            if marks:
                _apply(node, {keyword: values[name] for keyword, name in marks.items()})

    visit(schema)
    _as_json_content(schema)
    return schema


def json_parameter(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter's JSON Schema extra: its value is this JSON document, serialized (OpenAPI `content`)."""
    return {JSON_CONTENT: schema}


def _as_json_content(schema: dict[str, Any]) -> None:
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                content = parameter.get("schema", {}).pop(JSON_CONTENT, None)
                if content is not None:
                    parameter["content"] = {"application/json": {"schema": content}}
                    del parameter["schema"]


def _apply(node: dict[str, Any], limits: dict[str, Any]) -> None:
    branches = node.get("anyOf")
    if branches is None:
        node.update(limits)
        return
    kept = []
    for branch in branches:
        if branch.get("type") != "null":
            branch.update(limits)
            if branch.get("enum") == []:
                continue
        kept.append(branch)
    node["anyOf"] = kept


def install_served_schema(app: FastAPI, settings: Settings) -> None:
    """/openapi.json (and /docs) serve the schema with this server's limits in it."""
    generate = app.openapi
    published: list[dict[str, Any]] = []

    def openapi() -> dict[str, Any]:
        if not published:  # asked once the lifespan built the services: the served model's name is known
            services = getattr(app.state, "services", None)
            model = [services.backbone.name] if services is not None else []
            published.append(with_served_limits(generate(), {**served_values(settings), "model": model}))
        return published[0]

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to publish a custom schema


def exclusive_forms(
    *forms: tuple[Iterable[str], Iterable[str], dict[str, Any] | None],
) -> Callable[[dict[str, Any]], None]:
    """A model's JSON Schema as a `oneOf` of its forms, each (required fields, optional fields, narrowed field
    schemas): what a model validator enforces, stated where clients and fuzzers read it."""

    def rewrite(schema: dict[str, Any]) -> None:
        properties = schema.pop("properties")
        schema.pop("required", None)
        schema.pop("additionalProperties", None)
        schema.pop("type", None)
        schema["oneOf"] = [
            _form(properties, list(required), list(optional), narrowed or {}) for required, optional, narrowed in forms
        ]

    return rewrite


def _form(
    properties: dict[str, Any], required: list[str], optional: list[str], narrowed: dict[str, Any]
) -> dict[str, Any]:
    fields = {}
    for name in required + optional:
        field = copy.deepcopy(properties[name])
        if name in required and "anyOf" in field:  # a required field of a form is not null there
            field["anyOf"] = [b for b in field["anyOf"] if b.get("type") != "null"]
            if len(field["anyOf"]) == 1:
                field = {**{k: v for k, v in field.items() if k != "anyOf"}, **field["anyOf"][0]}
        narrow = narrowed.get(name, {})
        if "const" in narrow:  # one value here: the field's choices and default say nothing more
            field = {k: v for k, v in field.items() if k not in ("enum", "default")}
        fields[name] = {**field, **narrow}
    return {"type": "object", "properties": fields, "required": required, "additionalProperties": False}
