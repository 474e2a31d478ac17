"""`python paper_rows/transfer_reference.py ...`: the command of attnlearn.rows.transfer_reference (whose docstring says
what it does), run on this checkout's code (_own_src)."""

import sys

import _own_src

if __name__ == "__main__":
    sys.exit(_own_src.main("transfer_reference"))
