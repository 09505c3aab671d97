"""``trpc-bridge call --progress``: the tfrs progress of a run, live, and then its answer.

Thinking is collapsed to one line (rewritten in place on a terminal, printed once the
thinking ends otherwise); progress text and peers' plain working text likewise; each
tool call gets a line when it starts and one when it ends (``▸`` running, ``✓`` done,
``✗`` aborted). The answer is printed once, when the run is over, from what the
terminal state delivered: never from progress.
"""

from __future__ import annotations

from collections.abc import Callable

from trpc_bridge.cli.console import ConsoleView
from trpc_bridge.codecs.tfrs import ProgressItem

#: Width of a collapsed line, label included.
LINE_WIDTH = 100
_LABELS = {"thinking": "thinking: ", "text": "progress: "}
_MARKS = {"running": ("▸", "cyan"), "done": ("✓", "green"), "aborted": ("✗", "red")}


def collapse(text: str, width: int) -> str:
    """``text`` on one line, at most ``width`` characters: whitespace runs become one
    space; a longer text keeps its end (the latest words) behind ``…``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else "…" + flat[-(width - 1) :]


class ProgressView(ConsoleView):
    def __init__(
        self, write: Callable[[str], None], *, color: bool = True, live: bool = False
    ) -> None:
        super().__init__(write, color=color)
        #: A terminal: the collapsed line is rewritten as it grows.
        self._live = live
        self._kind = ""  # the collapsed line's kind while one is open
        self._text = ""

    def _flush(self) -> None:
        """End the open collapsed line (non-terminals print it now, once)."""
        if self._kind and not self._live:
            self._line(self._collapsed(), dim=True)
        elif self._kind:
            self._newline()
        self._kind, self._text = "", ""

    def _collapsed(self) -> str:
        label = _LABELS[self._kind]
        return label + collapse(self._text, LINE_WIDTH - len(label))

    def show_progress(self, item: ProgressItem) -> None:
        envelope = item.envelope
        kind = "text" if item.pseudo or envelope.kind == "text" else envelope.kind
        if kind in _LABELS:
            if kind != self._kind:
                self._flush()
                self._kind = kind
            piece = item.text if item.pseudo else envelope.text
            # Thinking streams in pieces; progress texts are whole sentences or lines.
            joiner = "" if kind == "thinking" or not self._text else " "
            self._text += joiner + piece
            if self._live:
                self._write("\r\x1b[K" + self._style(self._collapsed(), dim=True))
                self._at_line_start = False
            return
        if kind == "tool_output_append":
            return  # the output itself is not shown; its tool's end is
        self._flush()
        if kind == "error":
            self._line(f"! {envelope.text}", fg="yellow")
            return
        mark, color = _MARKS[envelope.status]
        self._line(f"{mark} {envelope.tool} ({envelope.status})", fg=color)

    def answer(self, text: str) -> None:
        self._flush()
        if text:
            self._line(text)

    def close(self) -> None:
        self._flush()
        super().close()
