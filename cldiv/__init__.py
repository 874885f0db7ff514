"""cldiv: executable reproduction of *The Loss Is Not Enough* (ICML 2026).

The package reads bottom to top, and every import points down (``tests/test_layers.py``):

1. the maths and the data: ``sphere`` (sampling on S^{k-1}), ``losses``, ``metrics``, ``published``
   (every number typed from the paper), ``config`` (frozen, hashed experiment configs) and ``budgets``
   (every experiment's named budgets, in one schema);
2. the machinery every experiment shares, ``runs``: the result ``store``, the ``executor`` of sweeps,
   saved training ``states``, the ``convergence`` and ``doubling`` rules and the ``verdicts`` of agreement;
3. the experiments, one subpackage each: ``theory`` (Sections 3-4 made computable), ``synthetic``
   (Table 1, the sweeps of Section 4: generators, encoders, training, its runs and findings) and
   ``images`` (Figure 3: data, encoders, SimCLR, claims);
4. the book, ``book``: the scorecard, figures, chapter helpers, the ``cldiv`` command and the site.

Adding an experiment. Its code goes into a new subpackage of layer 3 (a frozen config dataclass with a
``kind``, its data or generators, its training loop returning a result dict, its list of runs and its
findings as numbers), importing only layers 1-2. Then it touches, outside that subpackage: its budgets
(``budgets.BUDGETS`` and ``budgets.GROUPS``), its published numbers (``published``), its chapter
(``notebooks/``, ``_toc.yml``, the chapter's parameter rules in ``book/parameters.RULES`` and golden
parameters in ``tests/golden/parameters.json``), a subcommand of ``book/cli.py`` that trains it, and its
claims on the scorecard (``book/scorecard.py``). ``tests/test_layers.py`` treats every subpackage it does not
name as an experiment, so the new one is checked without an entry there.
"""

__version__ = "0.1.0"
