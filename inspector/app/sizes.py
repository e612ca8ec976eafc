"""The terminal sizes at which the screens change their layout, so that every screen stays usable at 80x24."""

SHORT = 30  # rows up to which a screen keeps its lines for its list: the legend on one line, fewer header lines
DETAIL_FROM = 90  # columns from which the session screen starts with its detail pane (d shows or hides it)
NARROW = 100  # columns below which the workbench's settings column narrows
