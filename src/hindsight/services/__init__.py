"""Services own the rules and the transactions; stores own the SQL."""
