"""The client's stylesheet: only theme variables, so it reads well in dark and light themes."""

NARROW = 100
"""Terminal width below which the move list goes under the board."""

CSS = """
.banner {
    dock: top;
    height: auto;
    background: $warning;
    color: $text;
    text-style: bold;
    padding: 0 1;
    display: none;
}
#title {
    height: 1;
    background: $panel;
    color: $text;
    padding: 0 1;
}
#game-body { height: 1fr; }
#board-column { width: auto; height: auto; padding: 1 2; }
#side-panel {
    width: 1fr;
    min-width: 18;
    border-left: vkey $panel;
    padding: 0 1;
}
#spectators { color: $text-muted; }
.-narrow #game-body { layout: vertical; }
.-narrow #board-column { padding: 0 1; }
.-narrow #side-panel { width: 100%; height: 1fr; min-height: 3; border-left: none; border-top: hkey $panel; }
.-narrow #notice { margin-top: 0; }
.player { height: 1; width: 66; padding: 0 1; }
.player.-to-move { background: $boost; }
#notice { height: auto; width: 66; min-height: 2; margin-top: 1; color: $text; }
#analysis { width: 66; height: auto; color: $text-muted; display: none; }
#error { color: $error; text-style: bold; width: 66; display: none; }
#game-over {
    width: 66;
    height: auto;
    border: double $accent;
    padding: 0 1;
    text-align: center;
    display: none;
}

Board { height: auto; width: auto; }
Board #board-row { height: auto; width: auto; }
Board #houses { height: auto; width: auto; }
Board .row { height: 3; width: auto; }
Pit {
    content-align: center middle;
    text-style: bold;
    color: $foreground;
    border: round $secondary;
    border-title-align: center;
    border-title-color: $text-muted;
}
Pit.house { width: 8; height: 3; }
Pit.store { width: 9; height: 6; border: heavy $primary; border-title-color: $primary; }
Pit.-unavailable { color: $text-disabled; border: round $panel-lighten-2; }
Pit.-legal { border: round $success; border-title-color: $success; }
Pit.-cursor { border: double $accent; border-title-color: $accent; }
Board:focus Pit.-cursor { background: $accent 25%; }
Pit.-sown { background: $warning 25%; }
Pit.-landed { background: $warning 55%; }
Pit.-captured { background: $error 45%; }

#name-row { height: 3; padding: 0 1; }
#name-row Label { padding: 1 0; }
#name { width: 34; }
#tables { height: 1fr; padding: 0 1; }
.table-title { margin-top: 1; }
DataTable { height: auto; max-height: 10; }

ConfirmScreen, HelpScreen, CreateMatchScreen { align: center middle; }
#dialog {
    width: 44; height: auto; padding: 1 2;
    border: thick $accent; background: $surface;
}
#buttons { height: 3; align: center middle; }
#buttons Button { margin: 0 1; }
#help {
    width: 90; max-height: 90%; height: auto; padding: 1 2;
    border: thick $accent; background: $surface;
}
.hint { color: $text-muted; margin-top: 1; }
#create-form {
    width: 80; max-height: 95%; height: auto; padding: 0 2;
    border: thick $accent; background: $surface;
}
#create-grid { grid-size: 2; grid-columns: 28 1fr; grid-rows: 1; grid-gutter: 1 0; height: auto; margin-bottom: 1; }
#create-form Checkbox { margin-bottom: 0; }
#form-error { color: $error; height: auto; }
#form-buttons { height: 3; align: center middle; }
"""
