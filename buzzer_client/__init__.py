"""What players use: the buzzer, display and survey pages (plain HTML, CSS and JavaScript),
served by the game server. A package only so that its files ship in the wheel and are found
with ``importlib.resources`` wherever it is installed."""
