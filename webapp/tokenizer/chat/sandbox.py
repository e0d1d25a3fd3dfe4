"""The Jinja sandbox chat templates render in: transformers' environment, with every growth bounded.

`environment()` is Jinja's immutable sandbox with transformers' globals
(raise_exception, strftime_now, namespace, dict) and tojson filter; every
operator, filter and call that can grow a value is sized before it runs
(bounds.py), and `~` goes through a bounded concat.

What it does not do: compile, cache or render templates (templates.py), or the time limit (watchdog.py).
"""

from __future__ import annotations

import functools
import json
from datetime import datetime
from typing import Any, Callable

import jinja2
import jinja2.compiler
import jinja2.ext
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment

from webapp.tokenizer.chat import bounds as bounds_
from webapp.tokenizer.errors import short_repr


class Raised(jinja2.exceptions.TemplateError):
    """The template called raise_exception(message)."""


class _CodeGenerator(jinja2.compiler.CodeGenerator):
    """Jinja's code generator, with `~` sent through the environment's bounded concat (Jinja joins it
    with a plain str_join, which no sandbox hook sees)."""

    def visit_Concat(self, node: jinja2.nodes.Concat, frame: jinja2.compiler.Frame) -> None:
        self.write("environment.concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class Sandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox, with every operator, filter and call that can grow a value bounded
    before it runs (webapp/tokenizer/chat/bounds.py)."""

    intercepted_binops = frozenset(["*", "+", "**", "%"])
    code_generator_class = _CodeGenerator
    concat = staticmethod(bounds_.bounded_concat)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        bounds = bounds_.current()
        if bounds is not None:
            bounds.clock()
            if operator == "+":  # (the common one: each length taken once)
                left_size, right_size = bounds_.length(left), bounds_.length(right)
                if left_size is not None and right_size is not None:
                    bounds.build(left_size + right_size, "`+`")
            elif operator == "*":
                size, times = (left, right) if bounds_.length(left) is not None else (right, left)
                if bounds_.length(size) is not None and isinstance(times, int):
                    bounds.build((bounds_.length(size) or 0) * max(times, 0), "`*`")
                elif isinstance(left, int) and isinstance(right, int):
                    bounds.size(max(left.bit_length(), right.bit_length()) // 3, "`*`")
            elif operator == "**" and isinstance(left, (int, float)) and isinstance(right, (int, float)):
                if abs(right) > 64 and abs(left) > 1:
                    raise bounds_.Refused(f"`**` with an exponent of {short_repr(right)} is refused (at most 64)")
            elif operator == "%" and isinstance(left, str):
                values = right if isinstance(right, tuple) else (right,)
                bounds.build(bounds_.format_size(bounds, left, values, "`%`"), "`%`")
        return super().call_binop(context, operator, left, right)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        fmt = value.__self__

        @functools.wraps(wrapped)
        def bounded(*args: Any, **kwargs: Any) -> str:
            bounds = bounds_.current()
            if bounds is not None:
                values = list(args) + list(kwargs.values())
                if len(args) == 1 and isinstance(args[0], dict) and not kwargs:  # format_map
                    values = list(args[0].values())
                bounds.build(bounds_.format_size(bounds, fmt, values, "`format`"), "`format`")
            return wrapped(*args, **kwargs)

        return bounded

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (Jinja's signature)
        bounds = bounds_.current()
        if bounds is not None:
            bounds.clock()
            name = getattr(__obj, "__name__", "a call")
            bounds_.check_int_args(bounds, list(args) + list(kwargs.values()), f"`{name}`")
            owner = getattr(__obj, "__self__", None)
            if isinstance(owner, str):
                if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
                    parts = len(owner) + 1 if not args[0] else owner.count(args[0]) + 1
                    bounds.build(len(owner) + parts * len(args[1]), "`replace`")
                elif name == "join" and args:
                    items = list(args[0])
                    bounds.build(bounds_.predict_join(bounds, items, owner, "`join`"), "`join`")
                    args = (items, *args[1:])
                elif name == "expandtabs":
                    tab = args[0] if args and isinstance(args[0], int) else int(kwargs.get("tabsize", 8) or 0)
                    bounds.build(len(owner) + owner.count("\t") * max(tab, 0), "`expandtabs`")
                elif name in ("center", "ljust", "rjust", "zfill") and args and isinstance(args[0], int):
                    bounds.build(max(len(owner), args[0]), f"`{name}`")
        result = super().call(__context, __obj, *args, **kwargs)
        if bounds is not None:
            n = bounds_.length(result)
            if n is not None:
                bounds.size(n, "a call")
        return result


def _raise_exception(message: Any) -> None:
    raise Raised(str(message))


def _tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
            sort_keys: bool = False) -> str:
    # transformers' tojson: no HTML escaping, json.dumps's options
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


class _TemplateDict:
    """`dict(...)` in a template, with no attributes that reach Python's internals."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


def _check_namespace_name(name: Any) -> None:
    # A function, not a method: jinja's Namespace answers every attribute read from its own dict.
    if isinstance(name, str) and name.startswith("_"):
        raise jinja2.exceptions.SecurityError(f"namespace attribute {name!r}: underscore names are refused")


class _TemplateNamespace(jinja2.utils.Namespace):
    """`namespace(...)`, refusing underscore-prefixed names (as transformers does)."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # noqa: N805 (Jinja's Namespace signature)
        self, rest = args[0], args[1:]
        attrs = dict(*rest, **kwargs)
        for name in attrs:
            _check_namespace_name(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _check_namespace_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)


def environment() -> Sandbox:
    """The one sandboxed environment's settings: transformers' filters and globals, every growth bounded."""
    env = Sandbox(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.filters = {name: bounds_.bounded_filter(name, func) for name, func in env.filters.items()}
    env.finalize = bounds_.finalize
    env.globals["lipsum"] = bounds_.bounded_lipsum
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _TemplateNamespace
    return env
