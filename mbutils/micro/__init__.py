"""The micro-benchmark product: build, one folder type, cards, the auto choice, scoring with verdicts, shipped sets, the lm-eval export."""
