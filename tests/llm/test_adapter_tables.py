"""Accounting for the adapters' tables: every 2020-12 keyword is handled or listed as kept as
is, every provider rule names its source, and stale entries fail."""

from __future__ import annotations

from jsonschema_specifications import REGISTRY

from conduit_mcp.llm import _anthropic, _gemini, _keywords, _openai

#: Keywords whose values the 2020-12 meta-schema leaves free: the default handler keeps them.
KEPT_AS_IS = {"const", "default"}


def _meta_schema_keywords() -> set[str]:
    keywords: set[str] = set()
    for uri in REGISTRY:
        if "draft/2020-12" in uri:
            keywords |= set(REGISTRY.contents(uri).get("properties", {}))
    return keywords


def test_every_2020_12_keyword_has_a_handler_or_is_listed_as_kept() -> None:
    """Spec-mandated (the 2020-12 meta-schema and its vocabularies, from
    jsonschema-specifications): no keyword falls to the default by accident."""
    keywords = _meta_schema_keywords()
    assert len(keywords) > 50
    handled = set(_keywords.JSON_SCHEMA_HANDLERS)
    assert keywords - handled == KEPT_AS_IS
    # draft-04 `id` is the one handled keyword the 2020-12 meta-schema does not describe
    assert handled - keywords == {"id", "additionalItems"}


def test_strict_table_covers_every_keyword_plain_mode_walks_into() -> None:
    """conduit-defined: strict mode keeps, refuses or rewrites each applicator; the rest fall to
    its default (removed with a note)."""
    strict = set(_openai.STRICT_HANDLERS)
    applicators = {
        "contentSchema", "properties", "items", "anyOf", "oneOf", "allOf", "not", "$defs",
        "if", "then", "else", "prefixItems", "contains", "patternProperties", "propertyNames",
        "dependentSchemas", "unevaluatedItems", "unevaluatedProperties", "additionalProperties",
        "definitions", "dependencies",
    }  # fmt: skip
    assert applicators <= set(_keywords.JSON_SCHEMA_HANDLERS)
    # contentSchema only annotates strings: removed with a note like other unsupported keywords
    assert applicators - strict == {"contentSchema"}


def test_every_rule_names_a_source() -> None:
    """conduit-defined (issue 12: rules as data with the source of each rule)."""
    for module in (_openai, _anthropic, _gemini):
        assert module.RULES
        for rule in module.RULES:
            assert rule.keyword and rule.rule and rule.source
