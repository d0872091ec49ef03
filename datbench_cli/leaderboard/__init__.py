"""``datbench leaderboard``: many runs of one benchmark ranked by the headline metric, with
95% intervals, significance groups in compact-letter form and, with ``--trend``, checkpoints
on an ordered axis.

:mod:`.runs` reads and labels the runs and refuses incomparable ones, :mod:`.board` computes
the leaderboard (plain JSON-able data), :mod:`.letters` the compact letter display,
:mod:`.outputs` the terminal table and the tidy CSV, :mod:`.page` the HTML page.
"""
