"""A checkbox whose off state reads differently from its on state without colour: an empty box, not a dim X."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Checkbox

ON_GLYPH = "X"
OFF_GLYPH = " "


class FlagBox(Checkbox):
    """A Textual checkbox that shows `X` when on and an empty box when off (Textual's shows X in both, only its
    colour telling them apart: nothing in a monochrome terminal or to a colour-blind eye)."""

    @property
    def _button(self) -> Content:
        """The box, with the glyph of the current value."""
        self.BUTTON_INNER = ON_GLYPH if self.value else OFF_GLYPH
        return super()._button
