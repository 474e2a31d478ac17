"""`python paper_rows/row_costs.py ...`: the command of attnlearn.rows.row_costs (whose docstring says what it
does), run on this checkout's code (_own_src)."""

import sys

import _own_src

if __name__ == "__main__":
    sys.exit(_own_src.main("row_costs"))
