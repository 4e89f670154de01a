"""Modal dialogs: a yes/no confirmation, the resume-or-new choice, and the rules help."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from client.rules_text import rules_text
from protocol import Variant


class ConfirmScreen(ModalScreen[bool]):
    """Ask a yes/no question; dismisses with the answer."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        """The question and two buttons."""
        with Vertical(id="dialog"):
            yield Static(self.question, id="question")
            yield Static("y: yes · n / Esc: no", classes="hint")
            with Horizontal(id="buttons"):
                yield Button("Yes", id="yes", variant="error")
                yield Button("No", id="no", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """A button answers."""
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        """A key answers."""
        self.dismiss(yes)


class ResumeScreen(ModalScreen[bool]):
    """Offer to reopen an unfinished game or start a new one; dismisses with True to resume."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r,enter", "answer(True)", "Resume"),
        Binding("n", "answer(False)", "New game"),
    ]

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def compose(self) -> ComposeResult:
        """What is unfinished, and the two choices."""
        with Vertical(id="dialog"):
            yield Static(f"You have an unfinished game: {self.what}.", id="question")
            yield Static("r / Enter: resume it · n: start a new game", classes="hint")
            with Horizontal(id="buttons"):
                yield Button("Resume", id="resume", variant="primary")
                yield Button("New game", id="new")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """A button chooses."""
        self.dismiss(event.button.id == "resume")

    def action_answer(self, resume: bool) -> None:
        """A key chooses."""
        self.dismiss(resume)


class HelpScreen(ModalScreen[None]):
    """The rules of one variant, and the keys."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark,f1", "close", "Close")]

    def __init__(self, variant: Variant) -> None:
        super().__init__()
        self.variant = variant

    def compose(self) -> ComposeResult:
        """The rules text in a scrolling box."""
        with VerticalScroll(id="help"):
            yield Static(rules_text(self.variant), id="rules")
            yield Static("Esc: close", classes="hint")

    def action_close(self) -> None:
        """Close the help."""
        self.dismiss()
