"""cldiv: executable reproduction of *The Loss Is Not Enough* (ICML 2026).

One concept per module: ``sphere`` (sampling), ``generators`` (g), ``encoders`` (f),
``losses``, ``metrics``, ``config`` and ``store`` (experiments and their results),
``chapters`` (re-executing the book), ``cli`` (the ``cldiv`` command).
"""

__version__ = "0.1.0"
