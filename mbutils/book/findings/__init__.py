"""What only the book computes from results: its worded claims, report tables, the paper's tables, calibration of stand-ins and interval coverage."""
