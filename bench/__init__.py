"""The benchmark of the referee (``python3 dev.py bench``, or ``python -m bench``).

One command starts its own redis-server and the real service under gunicorn (the
production settings of docs/operations.md; its app with the ceiling route added,
:mod:`bench.ceiling`), drives it from separate processes with many concurrent games of
every variant, measures the stack's ceiling and the floor of a bare Flask route in the same
run, adds in-process engine figures and Redis memory per game and per logged move, and
prints a report (``--json PATH`` writes it for machines).

Modules: :mod:`bench.stack` (the servers), :mod:`bench.ceiling` (the service's app with the
ceiling route), :mod:`bench.driver` (the load processes), :mod:`bench.http` (a lean
HTTP/1.1 keep-alive client), :mod:`bench.player` (how a client picks its moves from its
seat view), :mod:`bench.engine` (in-process figures), :mod:`bench.sim` (random play for
whole simulated hands), :mod:`bench.floor` (the bare Flask route), :mod:`bench.cpu` (CPU
per request from ``/proc``), :mod:`bench.report`, and :mod:`bench.instructions`
(``--instructions``: instructions per move and per ceiling call, counted by valgrind,
instead of the timed run).
"""
