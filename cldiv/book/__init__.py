"""The book on top of the experiments: the scorecard, figures, tables and chapter helpers, the
``cldiv`` command and the rendered site. Nothing below imports it."""
