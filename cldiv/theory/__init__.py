"""The theory of Sections 3-4 made computable: the asymptotic InfoNCE objective on S^2.

- ``quadrature``: integration rules on S^2, the circle and [-1, 1];
- ``maps``: the recovery maps the theorems are about (orthogonal maps, h_lambda, fibre rotations, ...);
- ``objective``: closed forms and the asymptotic objective (Theorems 3.3, 4.5, A.3, A.4) by quadrature;
- ``proof``: the steps of the proof of Theorem 4.4;
- ``monte_carlo``: finite-M InfoNCE losses that approach those limits.

The public names of all five are importable from here, ``from cldiv.theory import h_lambda``.
"""

from cldiv.theory.maps import (AxialMap, Composition, FibreCollapse, FibreRotation, FibreScaling, HemisphereReflection,
                               IsometryOffNullSet, Map, Orthogonal, RigidFibreMotion, SmoothPerturbation, compose,
                               h_lambda, random_orthogonal)
from cldiv.theory.monte_carlo import MonteCarloEstimate, monte_carlo_infonce
from cldiv.theory.objective import (CONDITIONALS, LOG_SPHERE_AREA, MEAN_LOG_FIBRE_LENGTH, METHODS, NEGATIVES,
                                    AsymptoticObjective, alignment_uniformity_bound, asymptotic_objective,
                                    identity_cross_entropy, minimise_witness, restricted_entropy, vmf_entropy,
                                    witness_alignment_slope)
from cldiv.theory.proof import (inner_product_distortion, log_model_conditional, log_partition,
                                recover_orthogonal)

__all__ = [
    "AxialMap",
    "Composition",
    "FibreCollapse",
    "FibreRotation",
    "FibreScaling",
    "HemisphereReflection",
    "IsometryOffNullSet",
    "Map",
    "Orthogonal",
    "RigidFibreMotion",
    "SmoothPerturbation",
    "compose",
    "h_lambda",
    "random_orthogonal",
    "MonteCarloEstimate",
    "monte_carlo_infonce",
    "CONDITIONALS",
    "LOG_SPHERE_AREA",
    "MEAN_LOG_FIBRE_LENGTH",
    "METHODS",
    "NEGATIVES",
    "AsymptoticObjective",
    "alignment_uniformity_bound",
    "asymptotic_objective",
    "identity_cross_entropy",
    "minimise_witness",
    "restricted_entropy",
    "vmf_entropy",
    "witness_alignment_slope",
    "inner_product_distortion",
    "log_model_conditional",
    "log_partition",
    "recover_orthogonal",
]
