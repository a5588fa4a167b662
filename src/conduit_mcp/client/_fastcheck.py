"""A fast path for `validate_structured`: a schema compiled once into plain closures.

Not a public module. jsonschema spends most of its time building validator objects per
subschema and per keyword; for the common case (a conforming result) the closures answer only
"valid or not". Any answer other than a clean "valid" goes back to jsonschema, which stays the
authority and words the issues (`_validate.py`). Agreement with jsonschema is tested on every
corpus schema and with hypothesis (tests/client/test_validate.py): only a false "valid" would
matter, and the tests look for exactly that.
"""

from __future__ import annotations

import functools
import numbers
import operator
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Final

from ._dialects import DRAFT_07, DRAFT_2020_12

# A schema the closures do not model (`$id` below the root, anchors, dynamic/recursive refs,
# non-local refs) has no fast path. The closures follow jsonschema 4.26's keyword functions rule
# by rule.

Check = Callable[[Any], bool]

_MISSING: Any = object()

# Keywords that change how references resolve: with any of them anywhere, no fast path.
_SCOPE_KEYWORDS: Final = frozenset(
    {"$anchor", "$dynamicAnchor", "$recursiveAnchor", "$dynamicRef", "$recursiveRef"}
)
# Keywords modelled by handing their whole subschema object to jsonschema.
_DELEGATED: Final = frozenset({"uniqueItems", "unevaluatedProperties", "unevaluatedItems"})


class _Unsupported(Exception):
    """The schema uses something the fast path does not model."""


def _always(instance: Any) -> bool:
    return True


def _never(instance: Any) -> bool:
    return False


def _is_number(x: Any) -> bool:
    kind = type(x)
    return kind is int or kind is float or (kind is not bool and isinstance(x, numbers.Number))


def _is_integer(x: Any) -> bool:
    kind = type(x)
    if kind is int:
        return True
    if kind is bool or isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


_TYPE_TESTS: Final = frozenset(
    {"object", "array", "string", "null", "boolean", "number", "integer"}
)


def _all_of(checks: list[Check]) -> Check:
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]

    def check(x: Any) -> bool:
        for each in checks:
            if not each(x):
                return False
        return True

    return check


def _multiple_of(divisor: Any) -> Check:
    # As jsonschema: float divisors compare the quotient, falling back to exact fractions.
    def check(x: Any) -> bool:
        if isinstance(divisor, float):
            quotient = x / divisor
            try:
                return bool(int(quotient) == quotient)
            except OverflowError:
                return (Fraction(x) / Fraction(divisor)).denominator == 1
        return not (x % divisor)

    return check


def _scan_scope_keywords(root: Any) -> None:
    # Explicit stack: the schema may be deep. Property *names* that look like keywords also
    # count (a false alarm only costs the fast path).
    stack = [root]
    first = True
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if not _SCOPE_KEYWORDS.isdisjoint(node) or ("$id" in node and not first):
                raise _Unsupported
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        first = False


class _FastCompiler:
    """Compile one (already meta-schema-checked) schema document into closures."""

    def __init__(self, root: Any, dialect: str, slow: Any) -> None:
        self.root = root
        self.slow = slow  # the jsonschema validator for the root, for delegated subschemas
        self.known = frozenset(slow.VALIDATORS)  # the dialect's keywords (ours only reword some)
        self.ref_siblings = dialect != DRAFT_07  # draft-07: `$ref` hides its siblings
        self.legacy_items = dialect != DRAFT_2020_12
        self.draft_07 = dialect == DRAFT_07
        self.memo: dict[int, Check] = {}

    def compile(self, schema: Any) -> Check:
        if schema is True:
            return _always
        if schema is False:
            return _never
        if not isinstance(schema, dict):
            raise _Unsupported
        key = id(schema)
        found = self.memo.get(key)
        if found is not None:
            return found
        cell: list[Check] = []
        # A `$ref` cycle reaches this schema again before it is built: forward to the cell.
        self.memo[key] = lambda x: cell[0](x)
        built = self._build(schema)
        cell.append(built)
        self.memo[key] = built
        return built

    def _resolve(self, ref: Any) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#") or "%" in ref:
            raise _Unsupported
        if ref == "#":
            return self.root
        if not ref.startswith("#/"):
            raise _Unsupported  # a plain-name fragment (anchor)
        node = self.root
        for raw in ref[2:].split("/"):
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise _Unsupported
        return node

    def _build(self, schema: dict[str, Any]) -> Check:
        if not self.ref_siblings and "$ref" in schema:
            return self.compile(self._resolve(schema["$ref"]))
        keywords = {k: v for k, v in schema.items() if k in self.known}
        if not _DELEGATED.isdisjoint(keywords):
            slow = self.slow.evolve(schema=schema)
            return lambda x: bool(slow.is_valid(x))
        type_names: list[str] | None = None
        general: list[Check] = []
        objects: list[Check] = []
        arrays: list[Check] = []
        strings: list[Check] = []
        numbers_: list[Check] = []
        fused = self._fused_object(keywords)
        if fused is not None:
            objects.append(fused)
        for keyword, value in keywords.items():
            if keyword == "type":
                type_names = list(value) if isinstance(value, list) else [value]
                if not all(name in _TYPE_TESTS for name in type_names):
                    raise _Unsupported
            elif keyword in ("enum", "const"):
                general.append(self._equality(keyword, value))
            elif keyword in ("allOf", "anyOf", "oneOf", "not", "if", "$ref"):
                general.append(self._applicator(keyword, value, schema))
            elif keyword == "format":
                continue  # an annotation: no format_checker
            elif keyword in _FUSED_OBJECT_KEYWORDS and fused is not None:
                continue
            elif keyword in _OBJECT_KEYWORDS:
                objects.append(self._object(keyword, value, schema))
            elif keyword in _ARRAY_KEYWORDS:
                arrays.append(self._array(keyword, value, schema))
            elif keyword in ("minLength", "maxLength", "pattern"):
                strings.append(_string_check(keyword, value))
            elif keyword in _NUMBER_KEYWORDS:
                numbers_.append(_number_check(keyword, value))
            else:
                raise _Unsupported
        return _combine(type_names, general, objects, arrays, strings, numbers_)

    def _fused_object(self, keywords: dict[str, Any]) -> Check | None:
        # properties + required + additionalProperties (without patternProperties) in one
        # closure: the shape nearly every real outputSchema has.
        if "patternProperties" in keywords or _FUSED_OBJECT_KEYWORDS.isdisjoint(keywords):
            return None
        props = keywords.get("properties", {})
        pairs = tuple(
            (name, sub)
            for name, sub in ((name, self.compile(sub)) for name, sub in props.items())
            if sub is not _always
        )
        required = tuple(keywords.get("required", ()))
        extra = keywords.get("additionalProperties", True)
        declared = frozenset(props)
        closed = extra is False
        extra_check = self.compile(extra) if isinstance(extra, dict) else None
        if extra_check is _always:
            extra_check = None

        def fused(x: dict[str, Any]) -> bool:
            for name in required:
                if name not in x:
                    return False
            for name, sub in pairs:
                if name in x and not sub(x[name]):
                    return False
            if closed:
                return declared.issuperset(x)
            if extra_check is not None:
                for key, value in x.items():
                    if key not in declared and not extra_check(value):
                        return False
            return True

        return fused

    def _equality(self, keyword: str, value: Any) -> Check:
        if keyword == "const":
            return lambda x: json_equal(value, x)
        if all(type(each) is str for each in value):
            allowed = frozenset(value)
            return lambda x: isinstance(x, str) and x in allowed
        return lambda x: any(json_equal(each, x) for each in value)

    def _applicator(self, keyword: str, value: Any, schema: dict[str, Any]) -> Check:
        if keyword == "$ref":
            return self.compile(self._resolve(value))
        if keyword == "not":
            inner = self.compile(value)
            return lambda x: not inner(x)
        if keyword == "if":
            test = self.compile(value)
            then = self.compile(schema["then"]) if "then" in schema else _always
            else_ = self.compile(schema["else"]) if "else" in schema else _always
            return lambda x: then(x) if test(x) else else_(x)
        subs = [self.compile(each) for each in value]
        if keyword == "allOf":
            return _all_of(subs)
        if keyword == "anyOf":
            return lambda x: any(sub(x) for sub in subs)

        def one_of(x: Any) -> bool:
            matched = 0
            for sub in subs:
                if sub(x):
                    matched += 1
                    if matched == 2:
                        return False
            return matched == 1

        return one_of

    def _object(self, keyword: str, value: Any, schema: dict[str, Any]) -> Check:
        if keyword == "properties":
            pairs = [(name, self.compile(sub)) for name, sub in value.items()]
            pairs = [(name, sub) for name, sub in pairs if sub is not _always]

            def properties(x: dict[str, Any]) -> bool:
                for name, sub in pairs:
                    if name in x and not sub(x[name]):
                        return False
                return True

            return properties
        if keyword == "required":
            return _requires(list(value))
        if keyword == "additionalProperties":
            return self._additional(value, schema)
        if keyword == "patternProperties":
            rules = [(_regex(pattern), self.compile(sub)) for pattern, sub in value.items()]
            return lambda x: all(
                sub(v) for regex, sub in rules for k, v in x.items() if regex.search(k)
            )
        if keyword == "propertyNames":
            sub = self.compile(value)
            return lambda x: all(sub(k) for k in x)
        if keyword == "minProperties":
            return lambda x: len(x) >= value
        if keyword == "maxProperties":
            return lambda x: len(x) <= value
        if keyword == "dependentRequired":
            needed = [(name, list(needs)) for name, needs in value.items()]
            return lambda x: all(n in x for name, needs in needed if name in x for n in needs)
        # "dependencies" (draft-07: arrays or schemas) and "dependentSchemas" (schemas)
        checks: list[tuple[str, Check]] = []
        for name, dependency in value.items():
            if keyword == "dependencies" and isinstance(dependency, list):
                checks.append((name, _requires(list(dependency))))
            else:
                checks.append((name, self.compile(dependency)))
        return lambda x: all(check(x) for name, check in checks if name in x)

    def _additional(self, value: Any, schema: dict[str, Any]) -> Check:
        if value is True:
            return _always
        declared = frozenset(schema.get("properties", ()))
        patterns = [_regex(p) for p in schema.get("patternProperties", ())]
        sub = self.compile(value) if isinstance(value, dict) else _never

        def additional(x: dict[str, Any]) -> bool:
            for k, v in x.items():
                if k in declared or any(p.search(k) for p in patterns):
                    continue
                if not sub(v):
                    return False
            return True

        return additional

    def _array(self, keyword: str, value: Any, schema: dict[str, Any]) -> Check:
        if keyword == "minItems":
            return lambda x: len(x) >= value
        if keyword == "maxItems":
            return lambda x: len(x) <= value
        if keyword == "contains":
            sub = self.compile(value)
            if self.draft_07:
                return lambda x: any(sub(e) for e in x)
            least = schema.get("minContains", 1)
            most = schema.get("maxContains", _MISSING)

            def contains(x: list[Any]) -> bool:
                limit = len(x) if most is _MISSING else most
                matched = 0
                for each in x:
                    if sub(each):
                        matched += 1
                        if matched > limit:
                            return False
                return bool(matched >= least)

            return contains
        if keyword == "prefixItems":
            subs = [self.compile(each) for each in value]
            return lambda x: all(sub(e) for sub, e in zip(subs, x, strict=False))
        if keyword == "items":
            if self.legacy_items and isinstance(value, list):
                subs = [self.compile(each) for each in value]
                return lambda x: all(sub(e) for sub, e in zip(subs, x, strict=False))
            prefix = 0 if self.legacy_items else len(schema.get("prefixItems", ()))
            if value is False:
                return lambda x: len(x) <= prefix
            sub = self.compile(value)
            if prefix:
                return lambda x: all(map(sub, x[prefix:]))
            return lambda x: all(map(sub, x))
        # additionalItems (draft-07, 2019-09): only after array-form `items`
        items = schema.get("items", {})
        if isinstance(items, dict):
            return _always
        if not isinstance(items, list):
            raise _Unsupported  # boolean `items`: jsonschema itself fails here
        start = len(items)
        if value is True:
            return _always
        if value is False:
            return lambda x: len(x) <= start
        sub = self.compile(value)
        return lambda x: all(sub(e) for e in x[start:])


_FUSED_OBJECT_KEYWORDS: Final = frozenset({"properties", "required", "additionalProperties"})
_OBJECT_KEYWORDS: Final = frozenset(
    {
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependencies",
        "dependentRequired",
        "dependentSchemas",
    }
)
_ARRAY_KEYWORDS: Final = frozenset(
    {"items", "prefixItems", "additionalItems", "contains", "minItems", "maxItems"}
)
_NUMBER_KEYWORDS: Final = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)


def _requires(names: list[Any]) -> Check:
    return lambda x: all(name in x for name in names)


def _any_test(tests: list[Check]) -> Check:
    return lambda x: any(test(x) for test in tests)


def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except (re.error, TypeError, ValueError, OverflowError, RecursionError):
        raise _Unsupported from None


def _string_check(keyword: str, value: Any) -> Check:
    if keyword == "minLength":
        return lambda x: len(x) >= value
    if keyword == "maxLength":
        return lambda x: len(x) <= value
    regex = _regex(value)
    return lambda x: regex.search(x) is not None


def _number_check(keyword: str, value: Any) -> Check:
    if keyword == "minimum":
        return lambda x: not x < value
    if keyword == "maximum":
        return lambda x: not x > value
    if keyword == "exclusiveMinimum":
        return lambda x: not x <= value
    if keyword == "exclusiveMaximum":
        return lambda x: not x >= value
    return _multiple_of(value)


_INSTANCE_TESTS: Final[dict[str, Check]] = {
    # Bound C methods (no Python frame per call) where the test is a plain isinstance.
    "object": dict.__instancecheck__,
    "array": list.__instancecheck__,
    "string": str.__instancecheck__,
    "boolean": bool.__instancecheck__,
    "null": functools.partial(operator.is_, None),
    "number": _is_number,
    "integer": _is_integer,
}


def _combine(
    type_names: list[str] | None,
    general: list[Check],
    objects: list[Check],
    arrays: list[Check],
    strings: list[Check],
    numbers_: list[Check],
) -> Check:
    if type_names is not None and len(type_names) == 1 and type_names[0] in _ONLY:
        # A single container or string type: checks for other kinds can never apply.
        name = type_names[0]
        test = _INSTANCE_TESTS[name]
        own = {"object": objects, "array": arrays, "string": strings}[name]
        rest = _all_of(general + own)
        if rest is _always:
            return test
        return lambda x: test(x) and rest(x)
    if type_names is not None:
        tests = [_INSTANCE_TESTS[name] for name in type_names]
        general.insert(0, tests[0] if len(tests) == 1 else _any_test(tests))
    on_object = _all_of(objects) if objects else None
    on_array = _all_of(arrays) if arrays else None
    on_string = _all_of(strings) if strings else None
    on_number = _all_of(numbers_) if numbers_ else None
    first = _all_of(general)
    if on_object is None and on_array is None and on_string is None and on_number is None:
        return first

    def check(x: Any) -> bool:
        if not first(x):
            return False
        if isinstance(x, dict):
            return on_object is None or on_object(x)
        if isinstance(x, list):
            return on_array is None or on_array(x)
        if isinstance(x, str):
            return on_string is None or on_string(x)
        if on_number is not None and _is_number(x):
            return on_number(x)
        return True

    return check


_ONLY: Final = frozenset({"object", "array", "string"})


def fast_checker(schema: Any, dialect: str, slow: Any) -> Check | None:
    """Closures for `schema`, or `None` when it uses something they do not model."""
    try:
        _scan_scope_keywords(schema)
        return _FastCompiler(schema, dialect, slow).compile(schema)
    except (_Unsupported, RecursionError, KeyError, TypeError, ValueError):
        return None


def json_equal(left: Any, right: Any) -> bool:
    """JSON equality (booleans are not numbers; 1 == 1.0), iterative, as jsonschema's `equal`."""
    stack = [(left, right)]
    while stack:
        one, two = stack.pop()
        if one is two:
            continue
        if isinstance(one, bool) or isinstance(two, bool):
            if not (isinstance(one, bool) and isinstance(two, bool) and one == two):
                return False
        elif isinstance(one, str) or isinstance(two, str):
            if not (isinstance(one, str) and isinstance(two, str) and one == two):
                return False
        elif isinstance(one, dict):
            if not isinstance(two, dict) or one.keys() != two.keys():
                return False
            stack.extend((value, two[key]) for key, value in one.items())
        elif isinstance(one, list):
            if not isinstance(two, list) or len(one) != len(two):
                return False
            stack.extend(zip(one, two, strict=True))
        elif isinstance(two, (dict, list)) or one != two:
            return False
    return True


def json_key(value: Any) -> Any:
    """A hashable key such that two JSON values have equal keys iff they are JSON-equal.

    Equality is jsonschema's (`jsonschema._utils.equal`): numbers compare by value (`1 == 1.0`,
    `2**60 == 2.0**60`), booleans are not numbers, objects compare by members regardless of
    order, arrays element by element. Built with an explicit stack (any depth).
    """
    # Post-order: each container's key is built once all its children's keys are known.
    done: dict[int, Any] = {}
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        node, ready = stack.pop()
        kind = type(node)
        if kind is dict or kind is list:
            if id(node) in done:
                continue
            if not ready:
                stack.append((node, True))
                children = node.values() if kind is dict else node
                stack.extend((child, False) for child in children if type(child) in (dict, list))
                continue
            if kind is dict:
                done[id(node)] = (
                    "o",
                    frozenset((k, _leaf_key(v, done)) for k, v in node.items()),
                )
            else:
                done[id(node)] = ("a", tuple(_leaf_key(v, done) for v in node))
    return _leaf_key(value, done)


def _leaf_key(value: Any, done: dict[int, Any]) -> Any:
    kind = type(value)
    if kind is dict or kind is list:
        return done[id(value)]
    if kind is bool:
        return ("b", value)
    if kind is str:
        return ("s", value)
    if value is None:
        return ("z",)
    if kind is int or kind is float:
        return ("n", value)  # hash(1) == hash(1.0): Python keeps equal numbers' hashes equal
    raise TypeError(f"not a JSON value: {kind.__name__}")


def all_unique(items: list[Any]) -> bool:
    """Whether the items of a JSON array are pairwise distinct (JSON Schema `uniqueItems`).

    Linear time through `json_key` (jsonschema's own check is quadratic for arrays of
    objects); anything `json_key` cannot take falls back to jsonschema's.
    """
    try:
        keys = {json_key(item) for item in items}
    except (TypeError, ValueError):
        from jsonschema._utils import uniq  # type: ignore[import-untyped]

        return bool(uniq(items))
    return len(keys) == len(items)
