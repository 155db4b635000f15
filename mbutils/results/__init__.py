"""The results layer: metrics, the noise rule, claims, the planner, the audit and the paper's tables."""
