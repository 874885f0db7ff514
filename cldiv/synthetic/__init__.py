"""The synthetic experiments (Sections 3-4): h = f o g on the sphere, Table 1 and its variants, the
constraint-ratio sweep and the progressive violation in 10-D. Generators g, encoders f, the training
loop, Table 1's cells, the sweeps, the convergence verdicts on their runs and the findings as numbers."""
