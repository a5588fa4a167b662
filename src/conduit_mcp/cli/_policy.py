"""`conduit-mcp policy`: check a tool policy file, set it in a pin store, show what is set.

Private to the CLI; loaded when the group is named (`cli._app`). The store keeps every
version (who set it, when, the file's digest); every proxy following the store applies a
new version within a second (`conduit_mcp.policy.PolicyFollower`).
"""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer

from .._program import APPROVER_PLACEHOLDER
from ..pins import StoredPolicy
from ..policy import Policy, PolicyError
from ._help import PlainHelpCommand, typer_app
from ._shared import JsonOption, fail
from ._store import open_store
from ._text import clipped, emit, json_text

app = typer_app(
    name="policy",
    help="Which tools each caller may list and call: a TOML policy kept in a pin store, applied "
    "by proxies run with --listen --auth jwt (a stdio proxy has no callers to tell apart).",
    no_args_is_help=True,
)

StoreOption = Annotated[
    str,
    typer.Option(
        "--store",
        metavar="LOCATION",
        help="Pin store: a sqlite file path, or a postgresql:// URL (e.g. "
        "postgresql://pins@db.internal/gateway).",
    ),
]
FileArgument = Annotated[str, typer.Argument(metavar="FILE", help="The policy file (TOML).")]


def _check_approver(value: str | None) -> str | None:
    if value is None:
        return value
    if not value.strip():
        raise typer.BadParameter("name who sets the policy (it must not be empty)")
    if value.strip() == APPROVER_PLACEHOLDER:
        raise typer.BadParameter(
            f"{APPROVER_PLACEHOLDER} stands for the person setting the policy: put your name"
            " in its place (or set CONDUIT_MCP_APPROVER and leave --approver out)"
        )
    return value


ApproverOption = Annotated[
    str,
    typer.Option(
        "--approver",
        metavar="WHO",
        envvar="CONDUIT_MCP_APPROVER",
        show_envvar=True,
        callback=_check_approver,
        help="Who sets the policy (a person), recorded with the version.",
    ),
]


def _load(path: str) -> Policy:
    try:
        return Policy.load(path)
    except PolicyError as exc:
        fail(str(exc))


def _summary(policy: Policy) -> str:
    return f"default {policy.default}, {len(policy.rules)} rule{'s' * (len(policy.rules) != 1)}"


@app.command("check", cls=PlainHelpCommand, short_help="Check a policy file; store nothing.")
def policy_check_command(path: FileArgument) -> None:
    """Check FILE: exit 0 and one line when it is a policy, else exit 2 with one line,
    FILE:LINE: the problem."""
    policy = _load(path)
    emit(f"{path}: a policy ({_summary(policy)}, {policy.digest})")


@app.command("set", cls=PlainHelpCommand, short_help="Set the store's policy from a file.")
def policy_set_command(path: FileArgument, store: StoreOption, approver: ApproverOption) -> None:
    """Check FILE and store it as the next version of the policy, with who set it and when.

    A file with a problem is one line, FILE:LINE: the problem (exit 2), and nothing is
    stored: every proxy keeps the policy it runs. The store is created when it does not
    exist. Every proxy following the store applies the new version within a second.
    """
    policy = _load(path)
    with open_store(store, create=True) as pins:
        stored = pins.set_policy(policy.text, approver=approver, source=path)
    emit(
        f"policy version {stored.version} set ({_summary(policy)}, {stored.digest})"
        f" by {clipped(approver)}"
    )


def _row(stored: StoredPolicy, *, text: bool) -> dict[str, Any]:
    row: dict[str, Any] = {
        "version": stored.version,
        "at": stored.at,
        "digest": stored.digest,
        "source": stored.source,
        "approver": stored.approver,
    }
    if text:
        row["text"] = stored.text
    return row


@app.command("show", cls=PlainHelpCommand, short_help="Show the store's policy (or its history).")
def policy_show_command(
    store: StoreOption,
    history: Annotated[
        bool, typer.Option("--history", help="Every version, oldest first, without the text.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Show the policy in force: its version, who set it and when, then its text. --history
    lists every version instead (version, time in UTC, digest, who, file). Exit 1 when the
    store holds no policy."""
    with open_store(store, create=False) as pins:
        versions = pins.policy_history() if history else tuple(filter(None, [pins.policy()]))
    if as_json:
        emit(json_text([_row(v, text=not history) for v in versions]))
    elif not versions:
        emit("no policy set")
    else:
        for stored in versions:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(stored.at))
            emit(
                f"version {stored.version}  {when}  {stored.digest[:23]}"
                f"  by {clipped(stored.approver or '-')}  from {clipped(stored.source or '-')}"
            )
        if not history:
            emit(versions[-1].text.rstrip("\n"))
    if not versions:
        raise typer.Exit(1)
