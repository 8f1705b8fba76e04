"""Progress as the place it is shown wants it: a tqdm bar on a terminal (ipywidgets in a
notebook), plain lines where stderr is a file or a pipe (a log, CI), as pip does: a bar's
cursor escapes would litter a log. Plain lines are written when what they say changes, at
most one a second, and once more at the end.
"""

from __future__ import annotations

import sys
import time
from typing import Any

PLAIN_EVERY_S = 1.0


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (bars are widgets there)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def interactive() -> bool:
    """Whether progress is drawn as bars here: stderr is a terminal, or this is a notebook."""
    return sys.stderr.isatty() or in_notebook()


class Bar:
    """One progress bar: ``update(n, total, note)`` as often as you like, ``close()`` once."""

    def __init__(
        self,
        desc: str,
        total: int | None,
        unit: str,
        *,
        position: int = 0,
        leave: bool = True,
        plain: bool | None = None,
    ) -> None:
        self.desc, self.total, self.unit = desc, total, unit
        self.plain = (not interactive()) if plain is None else plain
        self._bar: Any = None
        self._said: str | None = None
        self._when = 0.0
        self._line = ""
        if not self.plain:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=desc, unit=unit, position=position, leave=leave)

    def update(self, n: int, total: int | None = None, note: str = "") -> None:
        """Show ``n`` of ``total`` (None: as before) with a short note."""
        if total is not None:
            self.total = total
        if self._bar is not None:
            if total is not None and self._bar.total != total:
                self._bar.total = total
            self._bar.n = n
            self._bar.set_postfix_str(note, refresh=False)
            self._bar.refresh()
            return
        of = f"/{self.total}" if self.total is not None else ""
        self._line = f"{self.desc}: {n}{of} {self.unit}s" + (f" ({note})" if note else "")
        now = time.monotonic()
        if self._line != self._said and now - self._when >= PLAIN_EVERY_S:
            self._say(now)

    def _say(self, now: float) -> None:
        sys.stderr.write(self._line + "\n")
        sys.stderr.flush()
        self._said, self._when = self._line, now

    def close(self) -> None:
        """End the bar (a plain one says its last line if it has not yet)."""
        if self._bar is not None:
            self._bar.close()
        elif self._line and self._line != self._said:
            self._say(time.monotonic())
