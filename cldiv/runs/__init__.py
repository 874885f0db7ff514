"""The machinery every experiment shares: the result store, the executor of sweeps, saved training
states, the rules that say when a run or a cell has converged (``convergence``, ``doubling``) and
when ours agrees with a published number (``verdicts``). It knows no experiment."""
