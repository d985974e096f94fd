"""Process exit codes shared by several ``jobbench`` commands.

Every command: 0 success, 1 the work ran and something failed (a trial, a file, a gate),
2 bad input (an option, a file, a dataset), 130 interrupted. Commands that need the network
(``jobbench dataset pull``, ``jobbench selection fetch``) exit with :data:`EXIT_OFFLINE` when
it cannot be reached; ``jobbench gate`` uses the same code when a requested gate cannot run.
"""

EXIT_OFFLINE = 3
"""The network (or the one host needed) is unreachable, or offline mode is on
(``HF_HUB_OFFLINE``); nothing was written: connect, or fetch the files by other means."""
