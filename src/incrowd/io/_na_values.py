"""The texts a quasi-identifier cell may hold to count as missing, and the help line saying so.

Apart from the CSV reader (``_csv_text``), so that ``--help`` can quote them without loading
pandas.
"""

#: the only texts a parsed (quasi-identifier) column reads as missing; anything else that is not
#: a number is an error naming the column and row. Columns that are not parsed keep them as text,
#: and a sensitive column's l and t count them as its one missing value
#: (:func:`incrowd.values.sensitive_keys`): one vocabulary everywhere.
NA_VALUES: tuple[str, ...] = ("", "NA", "N/A", "NaN", "nan", "null", "NULL", "None", "#N/A", ".")
NA_HELP = ("Quasi-identifier cells reading " + ", ".join(repr(v) for v in NA_VALUES)
           + " count as missing (refused); every other column passes through as the file's text.")
