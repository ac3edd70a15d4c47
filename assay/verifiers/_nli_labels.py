"""Which output of an NLI model is entailment, neutral, contradiction: read from the
label names in the model's config, or given explicitly as a `label_map`."""

from __future__ import annotations

import re
from collections.abc import Mapping

from assay.errors import ModelConfigError

ROLES = ("entailment", "neutral", "contradiction")


def role_of_label(name: str) -> str | None:
    """entailment / neutral / contradiction from a label name, case- and punctuation-
    insensitive ('ENTAILMENT', 'entails', 'Contradiction', 'neutral'). A two-class
    model's 'not_entailment' plays the neutral role. Anything else: None."""
    n = re.sub(r"[^a-z]", "", name.lower())
    if n.startswith(("notentail", "nonentail")):
        return "neutral"
    if n.startswith("entail"):
        return "entailment"
    if n.startswith("contradict") or n == "contra":
        return "contradiction"
    if n.startswith("neutral"):
        return "neutral"
    return None


def resolve_label_roles(
    id2label: Mapping[int, str], label_map: Mapping[str, int] | None, *, model_id: str
) -> dict[str, int]:
    """Which output index is entailment, neutral, contradiction.

    An explicit `label_map` wins; otherwise every label in the model's config must name a
    distinct role. Entailment is required; contradiction and neutral are optional (a
    model without a contradiction class never yields `contradicted`).
    """
    found = {int(k): str(v) for k, v in id2label.items()}
    shown = ", ".join(f"{i}: {found[i]!r}" for i in sorted(found))
    if label_map is not None:
        roles = dict(label_map)
        bad = sorted(set(roles) - set(ROLES))
        if bad:
            raise ModelConfigError(
                f"model {model_id!r}: label_map keys must be {', '.join(ROLES)}; got {bad}"
            )
        if any(not isinstance(i, int) or i not in found for i in roles.values()):
            raise ModelConfigError(
                f"model {model_id!r}: label_map indices must be among the model's labels "
                f"({shown}); got {roles}"
            )
        if len(set(roles.values())) != len(roles):
            raise ModelConfigError(f"model {model_id!r}: label_map maps two roles to one index")
    else:
        roles = {}
        for index in sorted(found):
            role = role_of_label(found[index])
            if role is None or role in roles:
                roles = {}
                break
            roles[role] = index
        if not roles:
            raise ModelConfigError(
                f"model {model_id!r}: cannot tell entailment/neutral/contradiction from the "
                f"model's labels ({shown}); pass label_map, e.g. "
                "{'entailment': 0, 'neutral': 1, 'contradiction': 2}"
            )
    if "entailment" not in roles:
        raise ModelConfigError(
            f"model {model_id!r}: no entailment label among the model's labels ({shown})"
        )
    return roles
