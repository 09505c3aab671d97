"""``trpc-bridge api-key USER``: a new API key for ``serve --auth api-key``.

The key is printed once, on stderr, for the user to keep; stdout gets the line to add to
the key file, which holds only the key's digest (``server/auth/api_keys.py``)::

    trpc-bridge api-key alice >> keys.txt
"""

from __future__ import annotations

import typer

from trpc_bridge.cli.app import app


@app.command("api-key")
def api_key(user: str = typer.Argument(..., help="The user id the key names.")) -> None:
    """Make an API key for USER: the key on stderr, the key file's line on stdout."""
    from trpc_bridge.server.auth.api_keys import key_digest, new_key
    from trpc_bridge.server.auth.authenticator import checked_user_id
    from trpc_bridge.server.auth.errors import AuthError

    try:
        user = checked_user_id(user, "user argument")
    except AuthError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(2) from exc
    if any(c.isspace() for c in user):
        typer.echo("error: a user id in the key file cannot hold spaces", err=True)
        raise typer.Exit(2)
    key = new_key()
    typer.echo(f"API key for {user} (shown once): {key}", err=True)
    typer.echo(f"{user} {key_digest(key)}")
