"""``sdckit query --url URL --key KEY "SELECT ..."``: ask a protected query server."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from sdckit.commands._common import out, run_guarded


def _cell(value: Any) -> str:
    if isinstance(value, dict) and "lower" in value:
        return f"[{value['lower']:g}, {value['upper']:g}]"
    if isinstance(value, float):
        return f"{value:,.4f}"
    return str(value)


def query_command(
    url: str, key: str, sql: str, dataset: str | None, epsilon: float | None, as_json: bool
) -> dict[str, Any]:
    """Implementation of ``sdckit query``: send, then print the rows (or the JSON)."""
    from sdckit.client import Client

    answer = Client(url, key).query(sql, dataset=dataset, epsilon=epsilon)
    if as_json:
        print(json.dumps(answer, indent=2))
        return answer
    rows = answer.get("rows", [])
    from rich.table import Table  # (20 ms of import: only when printing)

    table = Table(title=f"{answer.get('mode', '')} answer", show_header=True)
    names = list(rows[0]) if rows else []
    for name in names:
        table.add_column(str(name), justify="right")
    for row in rows:
        table.add_row(*(_cell(row.get(n)) for n in names))
    out.print(table)
    if answer.get("mode") == "dp":
        cached = " (cached answer, nothing spent)" if answer.get("cached") else ""
        out.print(
            f"epsilon spent: {answer.get('epsilon_spent'):g}{cached}; "
            f"budget remaining: {answer.get('budget_remaining'):g}"
        )
    return answer


def query_cli(
    sql: Annotated[str, typer.Argument(help='The query, e.g. "SELECT COUNT(*) FROM adult".')],
    url: Annotated[
        str, typer.Option("--url", help="The server, e.g. http://127.0.0.1:8765.")
    ] = "http://127.0.0.1:8765",
    key: Annotated[
        str, typer.Option("--key", envvar="SDCKIT_KEY", help="Your analyst key (or $SDCKIT_KEY).")
    ] = "",
    dataset: Annotated[str | None, typer.Option("--dataset", help="The dataset's name.")] = None,
    epsilon: Annotated[
        float | None, typer.Option("--epsilon", help="Privacy budget of this query (dp mode).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the server's JSON.")] = False,
) -> None:
    """Ask a protected query server (sdckit serve); a refusal exits 2 with its message."""
    if not key:
        from sdckit.errors import SdcInputError

        def missing() -> None:
            raise SdcInputError("give your analyst key: --key KEY or the SDCKIT_KEY variable")

        run_guarded(missing)
    run_guarded(query_command, url, key, sql, dataset, epsilon, as_json)


def register(app: typer.Typer) -> None:
    """Add ``sdckit query`` to ``app``."""
    app.command("query")(query_cli)
