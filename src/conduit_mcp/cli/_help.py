"""Plain help text for the `conduit-mcp` command: usage lines a person can copy.

typer's own help shows Python types (`<bool>`, `<list[str]>`), brackets required arguments as
`{files}...`, and its rich panels cut long words such as URLs with an ellipsis. This command
class writes click's plain layout instead, from each parameter's metavar and help: `FILE...`,
`--store LOCATION`, `--json`, wrapped at spaces only (never inside `streamable-http` or a
URL), never truncated. An option that may come from an environment variable shows it
(`[env var: NAME]`) instead of `[required]`.
"""

from __future__ import annotations

import textwrap
from typing import Any

import typer
from typer.core import TyperCommand

#: The name column is at most this wide; a longer name gets its help on the next line.
NAME_COLUMN = 30


def _argument_name(param: Any) -> str:
    name = str(param.metavar or param.name.upper())
    return name + "..." if param.nargs != 1 else name


def _usage_piece(param: Any) -> str:
    name = _argument_name(param)
    return name if param.required else f"[{name}]"


def _joined(opts: list[str]) -> str:
    # Short forms first, as click writes them (`-h, --help`).
    return ", ".join(sorted(opts, key=lambda opt: len(opt) - len(opt.lstrip("-"))))


def _option_name(param: Any) -> str:
    names = _joined(param.opts)
    if param.secondary_opts:
        names += " / " + _joined(param.secondary_opts)
    if not param.is_flag and not getattr(param, "count", False):
        names += " " + str(param.metavar or param.name.upper())
    return names


def _shown_envvar(param: Any) -> str | None:
    """The environment variable an option is read from, when its help is to show it."""
    envvar = getattr(param, "envvar", None)
    if not getattr(param, "show_envvar", False) or not envvar:
        return None
    return envvar if isinstance(envvar, str) else " or ".join(envvar)


def _option_help(param: Any) -> str:
    extra = []
    default = param.default
    envvar = _shown_envvar(param)
    if envvar is not None:
        # Required from either source: the help says so in words; "required" beside it read
        # as "the option must be typed" (a newcomer set the variable and still typed it).
        extra.append(f"env var: {envvar}")
    elif param.required:
        extra.append("required")
    elif param.is_flag and param.secondary_opts and default is not None:
        extra.append(f"default: {(param.opts if default else param.secondary_opts)[0]}")
    elif not param.is_flag and default not in (None, (), []):
        extra.append(f"default: {default}")
    help_text = str(param.help or "")
    return f"{help_text}  [{'; '.join(extra)}]" if extra else help_text


class PlainHelpCommand(TyperCommand):
    """A typer command whose `--help` / `-h` is click's plain layout with readable names."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """`[OPTIONS]` and each argument by its metavar (`FILE...`, `PAGE`)."""
        pieces = [str(self.options_metavar)] if self.options_metavar else []
        params = self.get_params(ctx)
        pieces += [_usage_piece(p) for p in params if p.param_type_name == "argument"]
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        """An Arguments and an Options section: name, then help with default and `required`."""
        arguments: list[tuple[str, str]] = []
        options: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            if getattr(param, "hidden", False):
                continue
            if param.param_type_name == "argument":
                arguments.append((_argument_name(param), str(getattr(param, "help", "") or "")))
            else:
                options.append((_option_name(param), _option_help(param)))
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    _write_rows(formatter, rows)


def _write_rows(formatter: Any, rows: list[tuple[str, str]]) -> None:
    """click's definition list, wrapped at spaces: a hyphenated value stays whole."""
    indent = " " * formatter.current_indent
    first = min(max(len(name) for name, _ in rows), NAME_COLUMN)
    width = max(formatter.width - formatter.current_indent - first - 2, 20)
    for name, help_text in rows:
        lines = textwrap.wrap(help_text, width, break_on_hyphens=False, break_long_words=False) or [
            ""
        ]
        if len(name) <= first:
            formatter.write(f"{indent}{name:<{first}}  {lines[0]}".rstrip() + "\n")
            rest = lines[1:]
        else:
            formatter.write(f"{indent}{name}\n")
            rest = lines
        for line in rest:
            formatter.write(f"{indent}{'':<{first}}  {line}\n")


def typer_app(**settings: Any) -> typer.Typer:
    """A typer app for one group's commands, set up as the root's: plain help (no rich
    panels or markup), `-h` beside `--help`, no shell-completion options.

    Args:
        settings: further `typer.Typer` arguments (`name`, `help`, `no_args_is_help`).
    """
    return typer.Typer(
        add_completion=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
        **settings,
    )
