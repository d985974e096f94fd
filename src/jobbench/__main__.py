"""``python -m jobbench``: the same as the ``jobbench`` console script."""

from .cli import main

main()
