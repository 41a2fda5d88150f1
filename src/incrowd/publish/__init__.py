"""Release of mixed quasi-identifiers (numeric and categorical) in one k-anonymous step."""
