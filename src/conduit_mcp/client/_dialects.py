"""JSON Schema dialects `validate_structured` supports, by canonical `$schema` URI."""

from __future__ import annotations

from typing import Final

DRAFT_07: Final = "http://json-schema.org/draft-07/schema#"
DRAFT_2019_09: Final = "https://json-schema.org/draft/2019-09/schema"
DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"

#: The dialects `validate_structured` supports, oldest first.
SUPPORTED_DIALECTS: Final = (DRAFT_07, DRAFT_2019_09, DRAFT_2020_12)
