"""The meta-evaluation: metrics, the MDAD and its interval, the noise rule, paired comparisons, planning, the audit."""
