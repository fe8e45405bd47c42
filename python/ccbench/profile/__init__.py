"""The benchmarking recipe's performance profile of one CCA (D2 Ch. 4): Q1 path
unpredictability, Q2 cross traffic, Q3 workload dynamics, with headline findings
flagged by documented rules. See docs/profile.md."""

from .recipe import QUESTIONS, experiments
from .rules import Finding, Rule, evaluate_rules, load_rules
from .run import Profile, is_profile_dir, load_profile, run_profile

__all__ = [
    "QUESTIONS",
    "Finding",
    "Profile",
    "Rule",
    "evaluate_rules",
    "experiments",
    "is_profile_dir",
    "load_profile",
    "load_rules",
    "run_profile",
]
